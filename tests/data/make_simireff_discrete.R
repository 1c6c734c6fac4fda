# Writes the simIReff reference beta-binomial margins used by tests/test_simulate_protocol.py
# (the discrete block). This script is fastrisk's own; it contains no simIReff code: it calls
# simIReff's effDisc_bbinom (MASS::fitdistr on extraDistr::dbbinom, shapes >= 1).
#
# Usage:
#   Rscript make_simireff_discrete.R <simireff> <out.csv> <matrix.csv>...
# <simireff> is "installed" (library(simIReff)) or a directory of simIReff's R files to source()
# (effDisc.R, effDisc-helper.R, effDisc_bbinom.R). Each <matrix.csv> (one column per run, one row
# per topic; fastrisk/bench_data/trec-matrices) is named <collection>_<measure>.csv with measure
# p10 or rr, whose support is simIReff's support(measure).
# The discrete kernel smoother (effDisc_dks) needs np::npudensbw, not available here: it is
# checked against a transcription of np's cv.ls objective instead (tests/reference/margins.py).
args <- commandArgs(trailingOnly = TRUE)
src <- args[1]; out <- args[2]; csvs <- args[-(1:2)]
if (src == "installed") {
  library(simIReff)
} else {
  for (f in list.files(src, "\\.R$", full.names = TRUE)) source(f)
}

# kept(): the study's run filtering, shared with the other reference scripts
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])), "study_runs.R"))

rows <- list()
for (csv in csvs) {
  coll <- sub("\\.csv$", "", basename(csv))
  measure <- sub("^.*_", "", coll)
  sup <- support(measure)
  X <- as.matrix(read.csv(csv, check.names = FALSE))
  for (r in kept(X)) {
    x <- X[, r]
    e <- try(effDisc_bbinom(x, sup), silent = TRUE)
    ok <- !inherits(e, "try-error")
    ll <- if (ok) sum(log(e$dfun(x))) else NA
    rows[[length(rows) + 1]] <- data.frame(
      collection = coll, run = colnames(X)[r], ok = ok,
      shape1 = if (ok) e$model$shape1 else NA, shape2 = if (ok) e$model$shape2 else NA,
      loglik = ll, aic = if (ok) 2 * 2 - 2 * ll else NA,
      mean = if (ok) e$mean else NA, var = if (ok) e$var else NA)
  }
}
d <- do.call(rbind, rows)
for (k in names(d)) if (is.numeric(d[[k]])) d[[k]] <- signif(d[[k]], 10)
write.csv(d, out, row.names = FALSE)
cat(R.version.string, "| MASS", format(packageVersion("MASS")), "| extraDistr",
    format(packageVersion("extraDistr")), "\n")
