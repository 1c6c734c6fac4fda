# Writes tests/data/rks_nks.csv: simIReff's Gaussian-kernel margin (effCont_nks: ks::kde, dkde, pkde,
# qkde, effContTrunc, effContMean / effContVar) on a sample of kept runs, for
# tests/test_simulate_rks.py. fastrisk's own script: it calls ks's and simIReff's functions.
#
# Usage: Rscript make_rks.R <simireff> <out.csv> <every> <matrix.csv>...
# <simireff> is "installed" (library(simIReff)) or a directory of simIReff's R/*.R files to source().
# For every <every>-th kept run (study_runs.R) of each matrix: effCont_nks's bandwidth, df, logLik,
# AIC, mean and variance, F(0) and F(1) of the untruncated estimate (pkde), the truncated density
# (deff), CDF (peff) and quantile (qeff) at a few points, all printed with %.17g; or R's error.
args <- commandArgs(trailingOnly = TRUE)
src <- args[1]; out <- args[2]; every <- as.integer(args[3]); csvs <- args[-(1:3)]
if (src == "installed") {
  library(simIReff)
  ns <- asNamespace("simIReff")
  for (f in c("effCont_nks", "AIC.eff", "logLik.eff", "deff", "peff", "qeff"))
    assign(f, get(f, envir = ns))
} else {
  for (f in list.files(src, "\\.R$", full.names = TRUE)) source(f)
}
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])), "study_runs.R"))
g <- function(v) sprintf("%.17g", v)
at <- c(0.05, 0.2, 0.5, 0.8)
pr <- c(0.1, 0.5, 0.9)
rows <- list()
for (csv in csvs) {
  coll <- sub("\\.csv$", "", basename(csv))
  X <- as.matrix(read.csv(csv, check.names = FALSE))
  runs <- kept(X)
  for (r in runs[seq(1, length(runs), by = every)]) {
    x <- X[, r]
    e <- tryCatch(effCont_nks(x), error = function(err) err)
    row <- data.frame(collection = coll, run = colnames(X)[r], ok = !inherits(e, "error"),
                      error = if (inherits(e, "error")) conditionMessage(e) else "")
    if (!inherits(e, "error")) {
      k <- e$model$kde
      F01 <- ks::pkde(c(0, 1), fhat = k)
      v <- c(h = k$h, df = e$df, loglik = as.numeric(logLik.eff(e, x)), aic = AIC.eff(e, x),
             mean = e$mean, var = e$var, f0 = F01[1], f1 = F01[2],
             setNames(deff(at, e), paste0("d", at)), setNames(peff(at, e), paste0("p", at)),
             setNames(qeff(pr, e), paste0("q", pr)))
      row <- cbind(row, as.data.frame(as.list(g(v)), col.names = names(v)))
    }
    rows[[length(rows) + 1]] <- row
  }
}
cols <- unique(unlist(lapply(rows, names)))
rows <- lapply(rows, function(d) { for (c in setdiff(cols, names(d))) d[[c]] <- NA; d[cols] })
write.csv(do.call(rbind, rows), out, row.names = FALSE)
cat(R.version.string, "| ks", format(packageVersion("ks")), "| KernSmooth", format(packageVersion("KernSmooth")), "\n")
