"""R's ``optim(par, fn, method = "L-BFGS-B", lower, upper)`` for a handful of variables, as R
runs it, so that a fit or a transformation fails exactly where R's does.

R's L-BFGS-B is version 2.3 of Zhu, Byrd, Lu & Nocedal's code (R's ``src/appl/lbfgsb.c``, a C
translation of the 1997 Fortran), driven by ``lbfgsb()`` in R's ``src/appl/optim.c`` and fed
the numerical gradient of R's ``src/library/stats/src/optim.c`` (``fmingr``). scipy ships
version 3.0, whose subspace minimisation differs (Morales & Nocedal 2011 project the Newton
point onto the box; 2.x truncates the step at the first bound), so scipy's iterates leave R's
after the first free variable reaches a bound and, where the objective is flat to rounding
noise, the two disagree on convergence. This module is written from the algorithm -- Byrd,
Lu, Nocedal & Zhu (1995), "A limited memory algorithm for bound constrained optimization",
SIAM J. Sci. Comput. 16 (5) ("BLNZ"); Zhu, Byrd, Lu & Nocedal (1997), ACM TOMS 23 (4),
Algorithm 778 ("ZBLN"); Moré & Thuente (1994), ACM TOMS 20 (3) ("MT") -- with R's choices
where the papers leave room, and keeps R's order of floating-point operations (sequential
sums, as the reference BLAS ``ddot``/``daxpy`` and LINPACK ``dpofa``/``dtrsl`` R calls) so
that decisions made on values near rounding noise come out the same:

- gradient (`r_gradient`): central differences with ``ndeps = 1e-3``; a step that would leave
  the box is shortened to the bound and the difference divided by the two half-widths'
  sum (``fmingr``'s ``usebounds`` branch);
- start: x projected onto the box; stop at once if the projected gradient's sup-norm is
  <= ``pgtol`` (ZBLN section 2);
- generalized Cauchy point (`_cauchy`): the first local minimiser of the quadratic model
  along the projected steepest-descent path, breakpoints visited in increasing order with
  the compact-representation updates of BLNZ section 4 (the curvature along a segment
  floored at ``eps * f''_0``);
- subspace minimisation (`_formk`, `_cmprlb`, `_subsm`): the direct primal method of BLNZ
  section 5.1 in the form of ZBLN (the indefinite matrix K, factorised LEL'), the Newton
  step from the Cauchy point over the free variables, truncated at the first bound it meets
  (step length <= 1, version 2.x);
- line search (`_LineSearch`, `_dcstep`): MT's dcsrch/dcstep with ftol 1e-3, gtol 0.9, xtol
  0.1, stpmin 0; stpmax 1e10, or the largest feasible step (1 on the first iteration when
  bounds exist); the first trial 1 / ||d|| on the first iteration (unless every variable is
  boxed), 1 after; at most 20 evaluations, after which (or on a non-descent direction) the
  previous iterate is restored and the memory reset; a failure with an empty memory (on the
  first iteration, or right after such a reset) ends the run with R's code 52 ("ERROR:
  ABNORMAL_TERMINATION_IN_LNSRCH");
- memory (`_Memory`): m = 5 pairs, the update skipped when s'y <= eps * (-g's) (ZBLN's
  test), B_0 = theta I with theta = y'y / s'y; a factorisation that fails resets it;
- stopping: relative reduction (f_k - f_k+1) / max(|f_k|, |f_k+1|, 1) <= factr * eps,
  projected-gradient sup-norm <= pgtol (both R's code 0), more than ``maxit`` iterations (R's
  code 1; checked by R's driver before the two tests).

Divisions by zero give C's infinities and NaNs (`_div`), not Python's exceptions. Checked bit
for bit against R 4.2.2 (par, value, code, counts) in ``tests/test_simulate_roptim.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

EPS = 2.220446049250313e-16  # DBL_EPSILON
_CONV_F = "CONVERGENCE: REL_REDUCTION_OF_F <= FACTR*EPSMCH"
_CONV_G = "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"
_ABNORMAL = "ERROR: ABNORMAL_TERMINATION_IN_LNSRCH"


class OptimResult(NamedTuple):
    """What R's ``optim`` returns: ``par``, ``value``, ``convergence`` (0 converged, 1 maxit
    reached, 52 line search failed), ``message`` and ``counts`` (function-and-gradient
    evaluations, R's ``counts[1]``)."""

    par: tuple
    value: float
    convergence: int
    message: str
    counts: int


def r_gradient(fn: Callable, x: Sequence[float], lower: Sequence[float], upper: Sequence[float],
               ndeps: float = 1e-3, fx: float | None = None) -> list:
    """R's numerical gradient of ``fn`` at ``x`` when ``optim`` has bounds (``fmingr``).
    ``fx``, fn(x) if known, saves evaluating fn at x again where a step is clipped to x itself
    (x on its bound: R evaluates it again, to the same value)."""
    p = list(x)
    g = []
    for i, xi in enumerate(x):
        up = xi + ndeps
        h_up = ndeps
        if up > upper[i]:
            up = upper[i]
            h_up = up - xi
        p[i] = up
        f_up = fx if fx is not None and up == xi else fn(p)
        dn = xi - ndeps
        h_dn = ndeps
        if dn < lower[i]:
            dn = lower[i]
            h_dn = xi - dn
        p[i] = dn
        f_dn = fx if fx is not None and dn == xi else fn(p)
        gi = _div(f_up - f_dn, h_up + h_dn)
        if not math.isfinite(gi):
            raise ValueError(f"non-finite finite-difference value [{i + 1}]")
        g.append(gi)
        p[i] = xi
    return g


def _div(a: float, b: float) -> float:
    """a / b with IEEE semantics (C's; Python raises on a zero divisor)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0.0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _sqrt(a: float) -> float:
    return math.sqrt(a) if a >= 0.0 else math.nan


# ----------------------------------------------------------- dense helpers (LINPACK order)
def _dot(a, b, n=None) -> float:
    s = 0.0
    for i in range(len(a) if n is None else n):
        s += a[i] * b[i]
    return s


def _chol_upper(a, off: int, n: int) -> int:
    """LINPACK ``dpofa``: Cholesky factor R'R of the n x n block of ``a`` at (off, off), R in
    the upper triangle; returns 0 or the (1-based) order of the failing minor."""
    for j in range(n):
        s = 0.0
        for k in range(j):
            t = a[off + k][off + j] - _colprod(a, off, k, j, k)
            t = t / a[off + k][off + k]
            a[off + k][off + j] = t
            s += t * t
        s = a[off + j][off + j] - s
        if s <= 0.0:
            return j + 1
        a[off + j][off + j] = math.sqrt(s)
    return 0


def _colprod(a, off: int, k: int, j: int, n: int) -> float:
    s = 0.0
    for i in range(n):
        s += a[off + i][off + k] * a[off + i][off + j]
    return s


def _solve_upper(a, n: int, b, transposed: bool) -> int:
    """LINPACK ``dtrsl`` for the upper triangle T of a's leading n x n block: solves T'x = b
    (``transposed``, job 11) or Tx = b (job 01) in place; nonzero if T is singular."""
    for i in range(n):
        if a[i][i] == 0.0:
            return i + 1
    if transposed:
        b[0] = b[0] / a[0][0]
        for j in range(1, n):
            s = 0.0
            for i in range(j):
                s += a[i][j] * b[i]
            b[j] = (b[j] - s) / a[j][j]
    else:
        b[n - 1] = b[n - 1] / a[n - 1][n - 1]
        for j in range(n - 2, -1, -1):
            temp = -b[j + 1]
            if temp != 0.0:
                for i in range(j + 1):
                    b[i] = b[i] + temp * a[i][j + 1]
            b[j] = b[j] / a[j][j]
    return 0


# ------------------------------------------------------------------- limited-memory matrix
class _Memory:
    """The compact L-BFGS matrix B = theta I - W M W' (BLNZ section 3, ZBLN section 3): the
    last ``col`` <= m corrections s (``S``) and y (``Y``) in a circular buffer starting at
    ``head``, S'Y (lower triangle, ``sy``), S'S (upper, ``ss``), the Cholesky factor J' of
    theta S'S + L D^-1 L' (``wt``), and the subspace matrices of `_formk` (``wn``, ``wn1``)."""

    def __init__(self, n: int, m: int):
        self.n, self.m = n, m
        self.S = [[0.0] * n for _ in range(m)]
        self.Y = [[0.0] * n for _ in range(m)]
        self.sy = [[0.0] * m for _ in range(m)]
        self.ss = [[0.0] * m for _ in range(m)]
        self.wt = [[0.0] * m for _ in range(m)]
        self.wn = [[0.0] * (2 * m) for _ in range(2 * m)]
        self.wn1 = [[0.0] * (2 * m) for _ in range(2 * m)]
        self.itail = 0
        self.reset()

    def reset(self):
        self.col, self.head, self.theta, self.iupdat, self.updatd = 0, 0, 1.0, 0, False

    def slots(self):
        """The buffer's slots, oldest first."""
        return [(self.head + j) % self.m for j in range(self.col)]

    def bmv(self, v):
        """M v for the 2 col-vector v (the middle matrix of the compact form, through the
        factorisation of ZBLN's ``bmv``); (M v, 0) or (None, nonzero) if singular."""
        col, sy = self.col, self.sy
        p = [0.0] * (2 * col)
        if col == 0:
            return p, 0
        p[col] = v[col]
        for i in range(1, col):
            s = 0.0
            for k in range(i):
                s += sy[i][k] * v[k] / sy[k][k]
            p[col + i] = v[col + i] + s
        tail = p[col:]
        info = _solve_upper(self.wt, col, tail, True)
        if info:
            return None, info
        for i in range(col):
            p[i] = v[i] / math.sqrt(sy[i][i])
        info = _solve_upper(self.wt, col, tail, False)
        if info:
            return None, info
        p[col:] = tail
        for i in range(col):
            p[i] = -p[i] / math.sqrt(sy[i][i])
        for i in range(col):
            s = 0.0
            for k in range(i + 1, col):
                s += sy[k][i] * p[col + k] / sy[i][i]
            p[i] += s
        return p, 0

    def update(self, s, y, rr: float, dr: float, stp: float, dtd: float):
        """Store the new pair (``matupd``) and refactor theta S'S + L D^-1 L' (``formt``);
        nonzero if that is not positive definite."""
        m = self.m
        self.updatd = True
        self.iupdat += 1
        if self.iupdat <= m:
            self.col = self.iupdat
            self.itail = (self.head + self.iupdat - 1) % m
        else:
            self.itail = (self.itail + 1) % m
            self.head = (self.head + 1) % m
        col, ss, sy = self.col, self.ss, self.sy
        self.S[self.itail] = list(s)
        self.Y[self.itail] = list(y)
        self.theta = _div(rr, dr)
        if self.iupdat > m:  # drop the oldest pair from S'S and S'Y
            for j in range(col - 1):
                for i in range(j + 1):
                    ss[i][j] = ss[i + 1][j + 1]
                for i in range(j, col - 1):
                    sy[i][j] = sy[i + 1][j + 1]
        slot = self.head
        for j in range(col - 1):
            sy[col - 1][j] = _dot(s, self.Y[slot])
            ss[j][col - 1] = _dot(self.S[slot], s)
            slot = (slot + 1) % m
        ss[col - 1][col - 1] = dtd if stp == 1.0 else stp * stp * dtd
        sy[col - 1][col - 1] = dr
        # formt: T = theta S'S + L D^-1 L' (upper triangle), then its Cholesky factor
        wt, theta = self.wt, self.theta
        for j in range(col):
            wt[0][j] = theta * ss[0][j]
        for i in range(1, col):
            for j in range(i, col):
                dd = 0.0
                for k in range(i):
                    dd += sy[i][k] * sy[j][k] / sy[k][k]
                wt[i][j] = dd + theta * ss[i][j]
        return _chol_upper(wt, 0, col)


# ------------------------------------------------------------------ generalized Cauchy point
def _heap_least(n: int, t, order, built: bool):
    """``hpsolb``: move the least of t[0:n] to t[n-1] and keep t[0:n-1] a heap (Williams'
    heapsort, CACM algorithm 232); ``built`` if t[0:n] is already a heap."""
    if not built:
        for k in range(1, n):
            val, idx = t[k], order[k]
            i = k
            while i > 0:
                j = (i + 1) // 2 - 1
                if val < t[j]:
                    t[i], order[i] = t[j], order[j]
                    i = j
                else:
                    break
            t[i], order[i] = val, idx
    if n > 1:
        out, idx_out = t[0], order[0]
        val, idx = t[n - 1], order[n - 1]
        i = 0
        while True:
            j = 2 * i + 1
            if j <= n - 2:
                if t[j + 1] < t[j]:
                    j += 1
                if t[j] < val:
                    t[i], order[i] = t[j], order[j]
                    i = j
                    continue
            break
        t[i], order[i] = val, idx
        t[n - 1], order[n - 1] = out, idx_out


def _cauchy(x, lo, hi, nbd, g, iwhere, mem: _Memory, sbgnrm: float):
    """The generalized Cauchy point (BLNZ section 4; ZBLN ``cauchy``): returns (info, xcp,
    c = W'(xcp - x)); updates ``iwhere`` (1 / 2 at the lower / upper bound, 0 free and moved,
    -3 free with zero gradient)."""
    n, m = len(x), mem.m
    col, theta, head = mem.col, mem.theta, mem.head
    col2 = 2 * col
    if sbgnrm <= 0.0:
        return 0, list(x), [0.0] * col2
    bounded = True
    nfree = n  # free variables go to order[nfree:] (filled from the end)
    nbreak, ibkmin, bkmin = 0, 0, 0.0
    f1 = 0.0
    p = [0.0] * col2
    d = [0.0] * n
    t = [0.0] * n
    order = [0] * n
    tl = tu = 0.0
    for i in range(n):
        neggi = -g[i]
        if iwhere[i] != 3 and iwhere[i] != -1:
            if nbd[i] <= 2:
                tl = x[i] - lo[i]
            if nbd[i] >= 2:
                tu = hi[i] - x[i]
            at_lo = nbd[i] <= 2 and tl <= 0.0
            at_hi = nbd[i] >= 2 and tu <= 0.0
            iwhere[i] = 0
            if at_lo:
                if neggi <= 0.0:
                    iwhere[i] = 1
            elif at_hi:
                if neggi >= 0.0:
                    iwhere[i] = 2
            elif abs(neggi) <= 0.0:
                iwhere[i] = -3
        if iwhere[i] != 0 and iwhere[i] != -1:
            d[i] = 0.0
            continue
        d[i] = neggi
        f1 -= neggi * neggi
        slot = head
        for j in range(col):
            p[j] += mem.Y[slot][i] * neggi
            p[col + j] += mem.S[slot][i] * neggi
            slot = (slot + 1) % m
        if nbd[i] in (1, 2) and neggi < 0.0:
            t[nbreak], order[nbreak] = tl / (-neggi), i
        elif nbd[i] >= 2 and neggi > 0.0:
            t[nbreak], order[nbreak] = tu / neggi, i
        else:
            nfree -= 1
            order[nfree] = i
            if abs(neggi) > 0.0:
                bounded = False
            continue
        if nbreak == 0 or t[nbreak] < bkmin:
            bkmin, ibkmin = t[nbreak], nbreak
        nbreak += 1
    if theta != 1.0:
        for j in range(col):
            p[col + j] = theta * p[col + j]
    xcp = list(x)
    if nbreak == 0 and nfree == n:
        return 0, xcp, [0.0] * col2
    c = [0.0] * col2
    f2 = -theta * f1
    f2_org = f2
    if col > 0:
        v, info = mem.bmv(p)
        if info:
            return info, xcp, c
        f2 -= _dot(v, p)
    dtm = _div(-f1, f2)
    tsum = 0.0
    done = False  # all variables fixed: xcp complete
    if nbreak > 0:
        nleft, it, tj = nbreak, 1, 0.0
        while True:
            tj0 = tj
            if it == 1:
                tj, ibp = bkmin, order[ibkmin]
            else:
                if it == 2 and ibkmin != nbreak - 1:
                    t[ibkmin], order[ibkmin] = t[nbreak - 1], order[nbreak - 1]
                _heap_least(nleft, t, order, it > 2)
                tj, ibp = t[nleft - 1], order[nleft - 1]
            dt = tj - tj0
            if dtm < dt:
                break
            tsum += dt
            nleft -= 1
            it += 1
            dibp = d[ibp]
            d[ibp] = 0.0
            if dibp > 0.0:
                zibp = hi[ibp] - x[ibp]
                xcp[ibp] = hi[ibp]
                iwhere[ibp] = 2
            else:
                zibp = lo[ibp] - x[ibp]
                xcp[ibp] = lo[ibp]
                iwhere[ibp] = 1
            if nleft == 0 and nbreak == n:
                dtm = dt
                done = True
                break
            dibp2 = dibp * dibp
            f1 += dt * f2 + dibp2 - theta * dibp * zibp
            f2 -= theta * dibp2
            if col > 0:
                for j in range(col2):
                    c[j] = c[j] + dt * p[j]
                wbp = [0.0] * col2
                slot = head
                for j in range(col):
                    wbp[j] = mem.Y[slot][ibp]
                    wbp[col + j] = theta * mem.S[slot][ibp]
                    slot = (slot + 1) % m
                v, info = mem.bmv(wbp)
                if info:
                    return info, xcp, c
                wmc, wmp, wmw = _dot(c, v), _dot(p, v), _dot(wbp, v)
                for j in range(col2):
                    p[j] = p[j] + (-dibp) * wbp[j]
                f1 += dibp * wmc
                f2 += 2.0 * dibp * wmp - dibp2 * wmw
            if f2 < EPS * f2_org:
                f2 = EPS * f2_org
            if nleft > 0:
                dtm = _div(-f1, f2)
                continue
            if bounded:
                f1 = f2 = dtm = 0.0
            else:
                dtm = _div(-f1, f2)
            break
    if not done:
        if dtm <= 0.0:
            dtm = 0.0
        tsum += dtm
        if tsum != 0.0:
            for i in range(n):
                xcp[i] = xcp[i] + tsum * d[i]
    if col > 0 and dtm != 0.0:
        for j in range(col2):
            c[j] = c[j] + dtm * p[j]
    return 0, xcp, c


def _feasible_step(x, d, idx, lo, hi, nbd, limit: float):
    """The longest step t <= ``limit`` with x + t d in the box, d[i] the direction of variable
    idx[i] (``subsm``'s backtracking, ``lnsrlb``'s stpmax); (t, the i where a bound cut it)."""
    alpha, ibd = limit, 0
    for i, k in enumerate(idx):
        dk = d[i]
        step = alpha
        if dk < 0.0 and nbd[k] in (1, 2):
            room = lo[k] - x[k]
            if room >= 0.0:
                step = 0.0
            elif dk * alpha < room:
                step = room / dk
        elif dk > 0.0 and nbd[k] >= 2:
            room = hi[k] - x[k]
            if room <= 0.0:
                step = 0.0
            elif dk * alpha > room:
                step = room / dk
        if step < alpha:
            alpha, ibd = step, i
    return alpha, ibd


# ------------------------------------------------------------------- subspace minimisation
def _formk(mem: _Memory, nsub: int, ind, nenter: int, ileave: int, indx2) -> int:
    """Form and factorise K = [-D - Y'ZZ'Y/theta, L_a' - R_z'; L_a - R_z, theta S'AA'S] of the
    direct primal method (BLNZ section 5.1, ZBLN ``formk``), Z the free and A the active
    variables at the Cauchy point, updating the inner products of the previous iteration
    (``wn1``) for the variables that entered (indx2[:nenter]) or left (indx2[ileave:]) the
    free set. Nonzero if a Cholesky factorisation fails."""
    n, m = mem.n, mem.m
    col, head, theta = mem.col, mem.head, mem.theta
    S, Y, W1, WN = mem.S, mem.Y, mem.wn1, mem.wn
    free, active = ind[:nsub], ind[nsub:]
    entering, leaving = indx2[:nenter], indx2[ileave:n]
    if mem.updatd:
        if mem.iupdat > m:  # drop the oldest pair
            for jy in range(m - 1):
                js = m + jy
                for k in range(m - 1 - jy):
                    W1[jy + k][jy] = W1[jy + 1 + k][jy + 1]
                    W1[js + k][js] = W1[js + 1 + k][js + 1]
                for k in range(m - 1):
                    W1[m + k][jy] = W1[m + 1 + k][jy + 1]
        iy, is_ = col - 1, m + col - 1
        newest = (head + col - 1) % m
        jp = head
        for jy in range(col):
            t1 = t2 = t3 = 0.0
            for k in free:
                t1 += Y[newest][k] * Y[jp][k]
            for k in active:
                t2 += S[newest][k] * S[jp][k]
                t3 += S[newest][k] * Y[jp][k]
            W1[iy][jy] = t1
            W1[is_][m + jy] = t2
            W1[is_][jy] = t3
            jp = (jp + 1) % m
        ip = head
        for i in range(col):
            t3 = 0.0
            for k in free:
                t3 += S[ip][k] * Y[newest][k]
            ip = (ip + 1) % m
            W1[m + i][col - 1] = t3
        upcl = col - 1
    else:
        upcl = col
    ip = head
    for iy in range(upcl):
        jp = head
        for jy in range(iy + 1):
            t1 = t2 = t3 = t4 = 0.0
            for k in entering:
                t1 += Y[ip][k] * Y[jp][k]
                t2 += S[ip][k] * S[jp][k]
            for k in leaving:
                t3 += Y[ip][k] * Y[jp][k]
                t4 += S[ip][k] * S[jp][k]
            W1[iy][jy] = W1[iy][jy] + t1 - t3
            W1[m + iy][m + jy] = W1[m + iy][m + jy] - t2 + t4
            jp = (jp + 1) % m
        ip = (ip + 1) % m
    ip = head
    for is_ in range(m, m + upcl):
        jp = head
        for jy in range(upcl):
            t1 = t3 = 0.0
            for k in entering:
                t1 += S[ip][k] * Y[jp][k]
            for k in leaving:
                t3 += S[ip][k] * Y[jp][k]
            if is_ <= jy + m:
                W1[is_][jy] += t1 - t3
            else:
                W1[is_][jy] += -t1 + t3
            jp = (jp + 1) % m
        ip = (ip + 1) % m
    for iy in range(col):
        is_, is1 = col + iy, m + iy
        for jy in range(iy + 1):
            WN[jy][iy] = _div(W1[iy][jy], theta)
            WN[col + jy][is_] = W1[is1][m + jy] * theta
        for jy in range(iy):
            WN[jy][is_] = -W1[is1][jy]
        for jy in range(iy, col):
            WN[jy][is_] = W1[is1][jy]
        WN[iy][iy] += mem.sy[iy][iy]
    if _chol_upper(WN, 0, col):
        return -1
    for js in range(col, 2 * col):
        b = [WN[i][js] for i in range(col)]
        _solve_upper(WN, col, b, True)
        for i in range(col):
            WN[i][js] = b[i]
    for is_ in range(col, 2 * col):
        for js in range(is_, 2 * col):
            s = 0.0
            for i in range(col):
                s += WN[i][is_] * WN[i][js]
            WN[is_][js] += s
    if _chol_upper(WN, col, col):
        return -2
    return 0


def _cmprlb(mem: _Memory, x, g, z, c, ind, nfree: int):
    """The reduced gradient r = -Z'(B (xcp - x) + g) of the quadratic model at the Cauchy
    point over the free variables (ZBLN ``cmprlb``); (r, info)."""
    col, theta, m = mem.col, mem.theta, mem.m
    r = [-theta * (z[k] - x[k]) - g[k] for k in ind[:nfree]]
    v, info = mem.bmv(c)
    if info:
        return r, -8
    slot = mem.head
    for j in range(col):
        a1, a2 = v[j], theta * v[col + j]
        for i in range(nfree):
            k = ind[i]
            r[i] += mem.Y[slot][k] * a1 + mem.S[slot][k] * a2
        slot = (slot + 1) % m
    return r, 0


def _subsm(mem: _Memory, nsub: int, ind, lo, hi, nbd, z, d) -> int:
    """Minimise the quadratic model over the free variables from the Cauchy point ``z`` (in
    place), d = -(Z'BZ)^-1 r by the Sherman-Morrison-Woodbury form of BLNZ section 5.1 with
    K of `_formk`, then follow d from z until the first bound it meets, the step length at
    most 1 (L-BFGS-B 2.x; 3.0 projects instead). Nonzero if K is singular."""
    if nsub <= 0:
        return 0
    col, theta, m = mem.col, mem.theta, mem.m
    wv = [0.0] * (2 * col)
    slot = mem.head
    for i in range(col):
        t1 = t2 = 0.0
        for j in range(nsub):
            k = ind[j]
            t1 += mem.Y[slot][k] * d[j]
            t2 += mem.S[slot][k] * d[j]
        wv[i] = t1
        wv[col + i] = theta * t2
        slot = (slot + 1) % m
    info = _solve_upper(mem.wn, 2 * col, wv, True)
    if info:
        return info
    for i in range(col):
        wv[i] = -wv[i]
    info = _solve_upper(mem.wn, 2 * col, wv, False)
    if info:
        return info
    slot = mem.head
    for jy in range(col):
        for i in range(nsub):
            k = ind[i]
            d[i] += _div(mem.Y[slot][k] * wv[jy], theta) + mem.S[slot][k] * wv[col + jy]
        slot = (slot + 1) % m
    for i in range(nsub):
        d[i] = _div(d[i], theta)
    alpha, ibd = _feasible_step(z, d, ind[:nsub], lo, hi, nbd, 1.0)
    if alpha < 1.0:
        dk, k = d[ibd], ind[ibd]
        if dk > 0.0:
            z[k] = hi[k]
            d[ibd] = 0.0
        elif dk < 0.0:
            z[k] = lo[k]
            d[ibd] = 0.0
    for i in range(nsub):
        z[ind[i]] += alpha * d[i]
    return 0


# ----------------------------------------------------------------------------- line search
def _cubic(f0, f1, s0, s1, d0, d1, clamp=False):
    """theta and gamma (>= 0) of the cubic interpolating f and f' at steps s0 and s1 (MT
    section 4), as dcstep scales them; ``clamp``: a negative radicand gives gamma 0."""
    theta = _div((f0 - f1) * 3.0, s1 - s0) + d0 + d1
    s = max(abs(theta), abs(d0), abs(d1))
    rad = _div(theta, s) * _div(theta, s) - _div(d0, s) * _div(d1, s)
    return theta, (0.0 if clamp and rad < 0 else s * _sqrt(rad))


def _cubic_step(stp, fp, dp, so, fo, do):
    """The minimiser of the cubic through (stp, fp, dp) and (so, fo, do), from stp (MT)."""
    theta, gamm = _cubic(fo, fp, so, stp, do, dp)
    if stp > so:
        gamm = -gamm
    p = gamm - dp + theta
    q = gamm - dp + gamm + do
    return stp + _div(p, q) * (so - stp)


def _dcstep(stx, fx, dx, sty, fy, dy, stp, fp, dp, brackt, stpmin, stpmax):
    """One safeguarded step of MT section 4 (MINPACK-2 ``dcstep``): the new trial step from
    the cubic / quadratic / secant interpolants of the best point (stx), the other end of the
    interval (sty) and the trial (stp); returns (stx, fx, dx, sty, fy, dy, stp, brackt)."""
    sgnd = dp * _div(dx, abs(dx))
    if fp > fx:  # higher value: minimum bracketed
        theta, gamm = _cubic(fx, fp, stx, stp, dx, dp)
        if stp < stx:
            gamm = -gamm
        p = gamm - dx + theta
        q = gamm - dx + gamm + dp
        stpc = stx + _div(p, q) * (stp - stx)
        stpq = stx + _div(dx, _div(fx - fp, stp - stx) + dx) / 2.0 * (stp - stx)
        stpf = stpc if abs(stpc - stx) < abs(stpq - stx) else stpc + (stpq - stpc) / 2.0
        brackt = True
    elif sgnd < 0.0:  # lower value, derivatives of opposite sign: bracketed
        stpc = _cubic_step(stp, fp, dp, stx, fx, dx)
        stpq = stp + _div(dp, dp - dx) * (stx - stp)
        stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
        brackt = True
    elif abs(dp) < abs(dx):  # lower value, same sign, derivative decreasing
        theta, gamm = _cubic(fx, fp, stx, stp, dx, dp, clamp=True)
        if stp > stx:
            gamm = -gamm
        p = gamm - dp + theta
        q = gamm + (dx - dp) + gamm
        r = _div(p, q)
        if r < 0.0 and gamm != 0.0:
            stpc = stp + r * (stx - stp)
        elif stp > stx:
            stpc = stpmax
        else:
            stpc = stpmin
        stpq = stp + _div(dp, dp - dx) * (stx - stp)
        if brackt:
            stpf = stpc if abs(stpc - stp) < abs(stpq - stp) else stpq
            lim = stp + (sty - stp) * 0.66
            stpf = min(lim, stpf) if stp > stx else max(lim, stpf)
        else:
            stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
            stpf = max(stpmin, min(stpmax, stpf))
    else:  # lower value, same sign, derivative not decreasing
        if brackt:
            stpf = _cubic_step(stp, fp, dp, sty, fy, dy)  # (fy - fp) / (stp - sty): same bits
        elif stp > stx:
            stpf = stpmax
        else:
            stpf = stpmin
    if fp > fx:
        sty, fy, dy = stp, fp, dp
    else:
        if sgnd < 0.0:
            sty, fy, dy = stx, fx, dx
        stx, fx, dx = stp, fp, dp
    return stx, fx, dx, sty, fy, dy, stpf, brackt


class _LineSearch:
    """MT's search for a step with f(stp) <= f(0) + ftol stp f'(0) and |f'(stp)| <= gtol
    |f'(0)| (MINPACK-2 ``dcsrch``), as a reverse-communication state machine: `start` then
    `next` with f and f' at each trial until the task is "CONV..." or "WARN...". Its state
    outlives a search, as in R (static variables)."""

    ftol, gtol, xtol, stpmin = 1e-3, 0.9, 0.1, 0.0

    def __init__(self):
        self.brackt, self.stage = False, 1
        self.ginit = self.gtest = self.gx = self.gy = self.finit = self.fx = self.fy = 0.0
        self.stx = self.sty = self.stmin = self.stmax = self.width = self.width1 = 0.0
        self.stpmax = 0.0

    def start(self, f: float, g: float, stp: float, stpmax: float) -> tuple:
        self.stpmax = stpmax
        task = "FG"
        if stp < self.stpmin:
            task = "ERROR: STP .LT. STPMIN"
        if stp > stpmax:
            task = "ERROR: STP .GT. STPMAX"
        if g >= 0.0:
            task = "ERROR: INITIAL G .GE. ZERO"
        if stpmax < self.stpmin:
            task = "ERROR: STPMAX .LT. STPMIN"
        if task != "FG":
            return stp, task
        self.brackt, self.stage = False, 1
        self.finit, self.ginit = f, g
        self.gtest = self.ftol * g
        self.width = stpmax - self.stpmin
        self.width1 = self.width / 0.5
        self.stx, self.fx, self.gx = 0.0, f, g
        self.sty, self.fy, self.gy = 0.0, f, g
        self.stmin, self.stmax = 0.0, stp + stp * 4.0
        return stp, task

    def next(self, f: float, g: float, stp: float) -> tuple:
        xtol, stpmin, stpmax, gtest = self.xtol, self.stpmin, self.stpmax, self.gtest
        ftest = self.finit + stp * gtest
        if self.stage == 1 and f <= ftest and g >= 0.0:
            self.stage = 2
        task = "FG"
        if self.brackt and (stp <= self.stmin or stp >= self.stmax):
            task = "WARNING: ROUNDING ERRORS PREVENT PROGRESS"
        if self.brackt and self.stmax - self.stmin <= xtol * self.stmax:
            task = "WARNING: XTOL TEST SATISFIED"
        if stp == stpmax and f <= ftest and g <= gtest:
            task = "WARNING: STP = STPMAX"
        if stp == stpmin and (f > ftest or g >= gtest):
            task = "WARNING: STP = STPMIN"
        if f <= ftest and abs(g) <= self.gtol * (-self.ginit):
            task = "CONVERGENCE"
        if task != "FG":
            return stp, task
        if self.stage == 1 and f <= self.fx and f > ftest:  # MT's modified function psi
            fm, gm = f - stp * gtest, g - gtest
            fxm, gxm = self.fx - self.stx * gtest, self.gx - gtest
            fym, gym = self.fy - self.sty * gtest, self.gy - gtest
            (self.stx, fxm, gxm, self.sty, fym, gym, stp, self.brackt) = _dcstep(
                self.stx, fxm, gxm, self.sty, fym, gym, stp, fm, gm, self.brackt, self.stmin, self.stmax)
            self.fx, self.fy = fxm + self.stx * gtest, fym + self.sty * gtest
            self.gx, self.gy = gxm + gtest, gym + gtest
        else:
            (self.stx, self.fx, self.gx, self.sty, self.fy, self.gy, stp, self.brackt) = _dcstep(
                self.stx, self.fx, self.gx, self.sty, self.fy, self.gy, stp, f, g, self.brackt,
                self.stmin, self.stmax)
        if self.brackt:
            if abs(self.sty - self.stx) >= self.width1 * 0.66:
                stp = self.stx + (self.sty - self.stx) * 0.5
            self.width1 = self.width
            self.width = abs(self.sty - self.stx)
            self.stmin, self.stmax = min(self.stx, self.sty), max(self.stx, self.sty)
        else:
            self.stmin = stp + (stp - self.stx) * 1.1
            self.stmax = stp + (stp - self.stx) * 4.0
        if stp < stpmin:
            stp = stpmin
        if stp > stpmax:
            stp = stpmax
        if self.brackt and (stp <= self.stmin or stp >= self.stmax
                            or self.stmax - self.stmin <= xtol * self.stmax):
            stp = self.stx
        return stp, "FG"


# ------------------------------------------------------------------------------ the driver
def _projgr_norm(x, g, lo, hi, nbd) -> float:
    """Sup-norm of the projected gradient (ZBLN ``projgr``)."""
    out = 0.0
    for i in range(len(x)):
        gi = g[i]
        if nbd[i] != 0:
            if gi < 0.0:
                if nbd[i] >= 2 and gi < x[i] - hi[i]:
                    gi = x[i] - hi[i]
            elif nbd[i] <= 2 and gi > x[i] - lo[i]:
                gi = x[i] - lo[i]
        if out < abs(gi):
            out = abs(gi)
    return out


def optim_lbfgsb(fn: Callable, par: Sequence[float], lower=None, upper=None, *, gr: Callable | None = None,
                 m: int = 5, factr: float = 1e7, pgtol: float = 0.0, maxit: int = 100,
                 ndeps: float = 1e-3) -> OptimResult:
    """R's ``optim(par, fn, gr, method = "L-BFGS-B", lower, upper, control = list(lmm = m,
    factr, pgtol, maxit, ndeps))`` (defaults R's). ``fn`` takes a list of floats; without
    ``gr`` the gradient is R's finite differences (`r_gradient`). ``lower`` / ``upper``: a
    number or one per variable, +-inf (or None) for none."""
    n = len(par)

    def bounds(b, inf):
        if b is None:
            return [inf] * n
        if isinstance(b, (int, float)):
            return [float(b)] * n
        return [float(v) for v in b]

    lo, hi = bounds(lower, -math.inf), bounds(upper, math.inf)
    nbd = [(1 if math.isfinite(a) else 0) + (2 if math.isfinite(b) else 0) for a, b in zip(lo, hi)]
    nbd = [{0: 0, 1: 1, 2: 3, 3: 2}[v] for v in nbd]  # L-BFGS-B's codes: 1 lower, 2 both, 3 upper
    for i in range(n):
        if nbd[i] == 2 and lo[i] > hi[i]:
            raise ValueError(f"L-BFGS-B: lower[{i + 1}] > upper[{i + 1}]")
    def fg(v):
        f = float(fn(list(v)))
        if not math.isfinite(f):
            raise ValueError("L-BFGS-B needs finite values of 'fn'")
        return f, (list(gr(list(v))) if gr is not None else r_gradient(fn, v, lo, hi, ndeps, f))

    # start: project onto the box; iwhere -1 unbounded, 3 fixed (l = u), 0 otherwise
    x = [float(v) for v in par]
    for i in range(n):
        if nbd[i] in (1, 2) and x[i] < lo[i]:
            x[i] = lo[i]
        elif nbd[i] >= 2 and x[i] > hi[i]:
            x[i] = hi[i]
    iwhere = [-1 if b == 0 else (3 if b == 2 and hi[i] - lo[i] <= 0.0 else 0) for i, b in enumerate(nbd)]
    constrained = any(b != 0 for b in nbd)
    boxed = all(b == 2 for b in nbd)
    tol = factr * EPS
    mem = _Memory(n, m)
    search = _LineSearch()
    f, g = fg(x)
    nfgv = 1
    sbgnrm = _projgr_norm(x, g, lo, hi, nbd)
    if sbgnrm <= pgtol:
        return OptimResult(tuple(x), f, 0, _CONV_G, nfgv)
    it = 0  # mainlb's iteration count
    r_iter = 0  # R driver's count of new iterates (maxit)
    nfree, indx, indx2 = n, list(range(n)), [0] * n
    while True:
        # ---- generalized Cauchy point and the free set there
        if not constrained and mem.col > 0:
            z, wrk, c = list(x), mem.updatd, None
        else:
            info, z, c = _cauchy(x, lo, hi, nbd, g, iwhere, mem, sbgnrm)
            if info:
                mem.reset()
                continue
            nenter, ileave = 0, n
            if it > 0 and constrained:
                for k in indx[:nfree]:
                    if iwhere[k] > 0:
                        ileave -= 1
                        indx2[ileave] = k
                for k in indx[nfree:]:
                    if iwhere[k] <= 0:
                        indx2[nenter] = k
                        nenter += 1
            wrk = ileave < n or nenter > 0 or mem.updatd
            free = [i for i in range(n) if iwhere[i] <= 0]
            bound = [i for i in range(n) if iwhere[i] > 0]
            nfree, indx = len(free), free + bound[::-1]
        # ---- subspace minimisation
        if nfree != 0 and mem.col != 0:
            info = _formk(mem, nfree, indx, nenter, ileave, indx2) if wrk else 0
            if not info:
                if c is None:  # unconstrained: r = -g
                    rvec, info = [-gi for gi in g], 0
                else:
                    rvec, info = _cmprlb(mem, x, g, z, c, indx, nfree)
                if not info:
                    info = _subsm(mem, nfree, indx, lo, hi, nbd, z, rvec)
            if info:
                mem.reset()
                continue
        # ---- line search along d = z - x
        d = [z[i] - x[i] for i in range(n)]
        dtd = _dot(d, d)
        dnorm = math.sqrt(dtd)
        stpmx = 1e10
        if constrained:
            if it == 0:
                stpmx = 1.0
            else:
                stpmx = _feasible_step(x, d, range(n), lo, hi, nbd, stpmx)[0]
        stp = min(_div(1.0, dnorm), stpmx) if it == 0 and not boxed else 1.0
        x0, g0, fold = list(x), list(g), f
        ifun = iback = 0
        failed = False
        gd = _dot(g, d)
        gdold = gd
        if gd >= 0.0:  # not a descent direction
            failed = True
            ls_info = -4
        else:
            stp, task = search.start(f, gd, stp, stpmx)
            while True:
                if task.startswith("CONV") or task.startswith("WARN"):
                    break
                ifun += 1
                nfgv += 1
                iback = ifun - 1
                if iback >= 20:
                    failed, ls_info = True, 0
                    break
                x = list(z) if stp == 1.0 else [stp * d[i] + x0[i] for i in range(n)]
                f, g = fg(x)
                gd = _dot(g, d)
                stp, task = search.next(f, gd, stp)
        if failed:
            x, g, f = x0, g0, fold
            if mem.col == 0:
                if ls_info == 0:
                    nfgv -= 1
                return OptimResult(tuple(x), f, 52, _ABNORMAL, nfgv)
            if ls_info == 0:
                nfgv -= 1
            mem.reset()
            continue
        # ---- new iterate
        it += 1
        sbgnrm = _projgr_norm(x, g, lo, hi, nbd)
        r_iter += 1
        if r_iter > maxit:
            return OptimResult(tuple(x), f, 1, "NEW_X", nfgv)
        if sbgnrm <= pgtol:
            return OptimResult(tuple(x), f, 0, _CONV_G, nfgv)
        if fold - f <= tol * max(abs(fold), abs(f), 1.0):
            return OptimResult(tuple(x), f, 0, _CONV_F, nfgv)
        y = [g[i] - g0[i] for i in range(n)]
        rr = _dot(y, y)
        if stp == 1.0:
            dr, ddum = gd - gdold, -gdold
        else:
            dr = (gd - gdold) * stp
            d = [stp * v for v in d]
            ddum = -gdold * stp
        if dr <= EPS * ddum:  # skip the update
            mem.updatd = False
            continue
        if mem.update(d, y, rr, dr, stp, dtd):
            mem.reset()
