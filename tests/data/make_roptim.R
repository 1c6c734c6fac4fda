# R's optim(method = "L-BFGS-B") on the study's P@10 effect-size transformations, for
# tests/test_simulate_roptim.py (provenance in tests/data/README.md).
#   Rscript tests/data/make_roptim.R <h1 csv: coll,i,j,target,ours,c0..c10> <output prefix>
# <prefix>_p10_transforms.csv: every 7th row: simIReff's effTransform objective (new CDF
#   pbeta(F, a, b), cummax; squared gap of its mean to target), from (1, 1), lower (1, 1),
#   factr = 1e-10 / eps (abs.tol = 1e-5), as effTransform calls optim.
# <prefix>_pow.csv: every 5th row, the same optimisation of a Kumaraswamy transform
#   1 - (1 - F^a)^b: only +, -, *, / and pow, which R and Python compute bit for bit, so the
#   optimizer alone decides (R's code, par and value must come out exactly).
args <- commandArgs(TRUE)
d <- read.csv(args[1])
sup <- (0:10) / 10
cols <- paste0("c", 0:10)
run <- function(idx, cdfmap) {
  out <- NULL
  for (k in idx) {
    cdf <- as.numeric(d[k, cols]); m <- d$target[k]
    mn <- function(a, b) { p <- cdfmap(cdf, a, b); sum(sup * c(p[1], diff(p))) }
    o <- optim(c(1, 1), function(par) (mn(par[1], par[2]) - m)^2, method = "L-BFGS-B",
               lower = c(1, 1), control = list(factr = 1e-10 / .Machine$double.eps))
    out <- rbind(out, data.frame(coll = d$coll[k], i = d$i[k], j = d$j[k],
                                 target = sprintf("%.17g", m),
                                 t(sprintf("%.17g", cdf)),
                                 r_conv = o$convergence, r_a = sprintf("%.17g", o$par[1]),
                                 r_b = sprintf("%.17g", o$par[2]), r_value = sprintf("%.17g", o$value),
                                 r_counts = o$counts[1]))
  }
  names(out)[5:15] <- cols
  out
}
p10 <- run(seq(1, nrow(d), by = 7), function(cdf, a, b) cummax(pbeta(cdf, a, b)))
write.csv(p10, paste0(args[2], "_p10_transforms.csv"), row.names = FALSE, quote = FALSE)
pw <- run(seq(1, nrow(d), by = 5), function(cdf, a, b) 1 - (1 - cdf^a)^b)
write.csv(pw, paste0(args[2], "_pow.csv"), row.names = FALSE, quote = FALSE)
# <prefix>_misc.csv: other paths of the code (no bounds, both bounds, upper only, a small memory
# that wraps around, maxit reached) on objectives R and Python compute alike.
fr <- function(x) 100 * (x[2] - x[1] * x[1])^2 + (1 - x[1])^2
q4 <- function(x) sum((x - c(0.5, -2, 3, 1))^2 * c(1, 3, 10, 0.1)) + x[1] * x[2] + 0.3 * x[3] * x[4]
cases <- list(
  rosen = optim(c(-1.2, 1), fr, method = "L-BFGS-B"),
  rosen_maxit3 = optim(c(-1.2, 1), fr, method = "L-BFGS-B", control = list(maxit = 3)),
  rosen_box = optim(c(-1.2, 1), fr, method = "L-BFGS-B", lower = c(-2, -2), upper = c(2, 2)),
  rosen_box_active = optim(c(-1.2, 1), fr, method = "L-BFGS-B", lower = c(-2, -2), upper = c(0.5, 2)),
  q4_upper = optim(c(0, 0, 0, 0), q4, method = "L-BFGS-B", upper = c(Inf, -2.5, 2, Inf)),
  q4_box_lmm2 = optim(c(0, 0, 0, 0), q4, method = "L-BFGS-B", lower = -1, upper = 1,
                      control = list(lmm = 2, factr = 10)))
misc <- do.call(rbind, lapply(names(cases), function(nm) {
  o <- cases[[nm]]
  data.frame(case = nm, par = paste(sprintf("%.17g", o$par), collapse = " "),
             value = sprintf("%.17g", o$value), r_conv = o$convergence, r_counts = o$counts[1],
             message = o$message)
}))
write.csv(misc, paste0(args[2], "_misc.csv"), row.names = FALSE, quote = FALSE)
