# Writes the simIReff reference margins used by tests/test_simulate_protocol.py.
# This script is fastrisk's own; it contains no simIReff code: it calls simIReff's functions.
#
# Usage:
#   Rscript make_simireff_margins.R <simireff> <out-prefix> <matrix.csv>...
# <simireff> is "installed" (library(simIReff)) or a directory of simIReff's R/*.R files to source().
# Each <matrix.csv> has one column per run and one row per topic (fastrisk/bench_data/trec-matrices).
# Writes <out-prefix>_fits.csv (one row per kept run and candidate family) and
# <out-prefix>_transforms.csv (effTransform of a few selected margins to two targets).
args <- commandArgs(trailingOnly = TRUE)
src <- args[1]; out <- args[2]; csvs <- args[-(1:2)]
if (src == "installed") {
  library(simIReff)
  ns <- asNamespace("simIReff")
  for (f in c("effCont_norm", "effCont_beta", "effCont_nks", "effCont_bks", "effTransform", "AIC.eff", "logLik.eff"))
    if (exists(f, envir = ns)) assign(f, get(f, envir = ns))
} else {
  for (f in list.files(src, "\\.R$", full.names = TRUE)) source(f)
}
has_bks <- exists("effCont_bks") && requireNamespace("bde", quietly = TRUE)

# kept(): the study's run filtering, shared with the other reference scripts
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])), "study_runs.R"))
params <- function(e) {
  m <- e$model
  switch(m$type, norm = c(m$mean, m$sd), beta = c(m$shape1, m$shape2), nks = c(m$kde$h, NA),
         bks = c(m$bde@b, NA), c(NA, NA))
}

fits <- list(); trans <- list()
for (csv in csvs) {
  coll <- sub("\\.csv$", "", basename(csv))
  X <- as.matrix(read.csv(csv, check.names = FALSE))
  runs <- kept(X)
  sel <- list()
  for (r in runs) {
    x <- X[, r]
    cands <- list()
    for (fam in c("norm", "beta", "nks", if (has_bks) "bks")) {
      e <- try(get(paste0("effCont_", fam))(x), silent = TRUE)
      if (inherits(e, "try-error")) next
      cands[[fam]] <- e
      p <- params(e)
      fits[[length(fits) + 1]] <- data.frame(
        collection = coll, run = colnames(X)[r], family = fam, p1 = p[1], p2 = p[2], df = e$df,
        loglik = as.numeric(logLik.eff(e, x)), aic = AIC.eff(e, x), mean = e$mean, var = e$var,
        selected = FALSE)
    }
    aics <- sapply(cands, AIC.eff, x = x)
    best <- names(cands)[which.min(aics)]
    fits[[length(fits)]]$selected <- FALSE
    n <- length(fits)
    for (k in (n - length(cands) + 1):n) fits[[k]]$selected <- fits[[k]]$family == best
    sel[[colnames(X)[r]]] <- cands[[best]]
  }
  # effTransform of every 20th kept run's selected margin to its mean -.05 and +.05
  for (name in names(sel)[seq(1, length(sel), by = 20)]) {
    e <- sel[[name]]
    for (d in c(-.05, .05)) {
      target <- e$mean + d
      t <- try(effTransform(e, target), silent = TRUE)
      ok <- !inherits(t, "try-error")
      trans[[length(trans) + 1]] <- data.frame(
        collection = coll, run = name, family = e$model$type, base_mean = e$mean, target = target, ok = ok,
        a = if (ok) t$model$par1 else NA, b = if (ok) t$model$par2 else NA,
        mean = if (ok) t$mean else NA, var = if (ok) t$var else NA)
    }
  }
}
fmt <- function(d) { for (k in names(d)) if (is.numeric(d[[k]])) d[[k]] <- signif(d[[k]], 10); d }
write.csv(fmt(do.call(rbind, fits)), paste0(out, "_fits.csv"), row.names = FALSE)
write.csv(fmt(do.call(rbind, trans)), paste0(out, "_transforms.csv"), row.names = FALSE)
cat(R.version.string, "| ks", format(packageVersion("ks")), "| truncnorm", format(packageVersion("truncnorm")),
    "| MASS", format(packageVersion("MASS")), "| bks:", has_bks, "\n")
