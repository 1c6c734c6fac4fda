# Writes tests/data/rnorm_fits.csv: simIReff's truncated-normal fit (effCont_norm's MASS::fitdistr
# call) on a sample of kept runs, bit for bit, for tests/test_simulate_rnorm.py. fastrisk's own code.
#
# Usage: Rscript make_rnorm.R <out.csv> <every> <matrix.csv>...
# For every <every>-th kept run (study_runs.R) of each matrix: optim's result as fitdistr calls it
# (par, value, convergence, counts, printed with %.17g) and whether fitdistr succeeds (`ok`) or
# its error message; where it succeeds, effCont_norm's integrals' error (`moments_error`, "" if none).
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]; every <- as.integer(args[2]); csvs <- args[-(1:2)]
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])), "study_runs.R"))
dens <- function(xx, mu, sigma) truncnorm::dtruncnorm(xx, a = 0, b = 1, mean = mu, sd = sigma)
rows <- list()
for (csv in csvs) {
  X <- as.matrix(read.csv(csv, check.names = FALSE))
  runs <- kept(X)
  for (r in runs[seq(1, length(runs), by = every)]) {
    x <- X[, r]
    start <- list(mu = mean(x), sigma = stats::sd(x))
    # optim as MASS::fitdistr calls it (named par; fn = -sum(log(dens)); hessian = TRUE)
    o <- try(optim(unlist(start), function(p) -sum(log(dens(x, p[1], p[2]))), method = "L-BFGS-B",
                   lower = c(-Inf, .05), upper = c(Inf, Inf)), silent = TRUE)
    f <- tryCatch(MASS::fitdistr(x, dens, start = start, lower = list(mu = -Inf, sigma = .05),
                                 upper = list(mu = Inf, sigma = Inf)), error = function(e) e)
    g <- function(v) sprintf("%.17g", v)
    # effCont_norm after the fit: where [0, 1] is not within mu -+ 6 sigma, its mean and variance are
    # integrate() of truncnorm's quantile function (abs.tol 1e-6, 1000 subdivisions; the same calls)
    merr <- ""
    if (!inherits(f, "error")) {
      mu <- unname(f$estimate[1]); sigma <- unname(f$estimate[2])
      q <- function(p) truncnorm::qtruncnorm(p, a = 0, b = 1, mean = mu, sd = sigma)
      if (0 < mu - 6 * sigma || 1 > mu + 6 * sigma) {
        m <- tryCatch({
          integrate(q, 0, 1, abs.tol = 1e-6, subdivisions = 1000)
          integrate(function(p) q(p)^2, 0, 1, abs.tol = 1e-6, subdivisions = 1000)
          ""
        }, error = function(e) conditionMessage(e))
        merr <- m
      }
    }
    oe <- inherits(o, "try-error")
    rows[[length(rows) + 1]] <- data.frame(
      collection = sub("\\.csv$", "", basename(csv)), run = colnames(X)[r],
      mu0 = g(start$mu), sd0 = g(start$sigma),
      mu = if (oe) NA else g(o$par[1]), sigma = if (oe) NA else g(o$par[2]),
      value = if (oe) NA else g(o$value), convergence = if (oe) NA else o$convergence,
      counts = if (oe) NA else o$counts[1], ok = !inherits(f, "error"),
      error = if (inherits(f, "error")) conditionMessage(f) else "", moments_error = merr)
  }
}
write.csv(do.call(rbind, rows), out, row.names = FALSE)
cat(R.version.string, "| MASS", format(packageVersion("MASS")), "| truncnorm", format(packageVersion("truncnorm")), "\n")
