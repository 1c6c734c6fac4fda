# Sourced by make_simireff_*.R (fastrisk's own code).
# the study's run filtering (sigir2019-statistical R/common.R: removeDuplicates, removeBottom(.1))
kept <- function(X, tol = 1e-5, bottom = .1) {
  S <- ncol(X); dup <- rep(FALSE, S)
  for (i in seq_len(S - 1)) for (j in (i + 1):S)
    if (!dup[j] && all(abs(X[, j] - X[, i]) <= tol)) dup[j] <- TRUE
  rest <- which(!dup)
  mu <- colMeans(X[, rest, drop = FALSE])
  rest[mu >= quantile(mu, bottom)]
}
