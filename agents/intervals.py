"""95% intervals, written once for the curves (shares over seeds) and the ratings.

:class:`Interval` is an estimate with its interval; :func:`interval` the Student's t interval
of shares measured with several seeds (clipped to 0..1); :func:`normal_interval` an estimate
plus or minus 1.96 standard errors; :func:`wilson_interval` the Wilson score interval of a
share counted over independent trials (a benchmark cell's positions);
:func:`percentile_interval` the middle 95% of a bootstrap's estimates; :func:`normal_cdf` the
chance that a normal variable lies below a value;
:func:`chi_square_tail` the chance that a chi-square variable lies above one (a p-value).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""

# Student's t, two-sided 95%, for 1 to 30 degrees of freedom; beyond, the normal 1.96.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


class Interval(NamedTuple):
    """An estimate (a mean over seeds, a rating) and its 95% interval."""

    mean: float
    low: float
    high: float


def interval(shares: Sequence[float]) -> Interval:
    """Mean and 95% t-interval of shares measured with different seeds (one seed: no width),
    clipped to the shares' range 0..1."""
    n = len(shares)
    mean = sum(shares) / n
    if n < 2:
        return Interval(mean, mean, mean)
    sd = math.sqrt(sum((s - mean) ** 2 for s in shares) / (n - 1))
    half = (_T95[n - 2] if n - 1 <= len(_T95) else Z95) * sd / math.sqrt(n)
    return Interval(mean, max(0.0, mean - half), min(1.0, mean + half))


def normal_interval(estimate: float, standard_error: float) -> Interval:
    """``estimate`` plus or minus 1.96 standard errors."""
    return Interval(estimate, estimate - Z95 * standard_error, estimate + Z95 * standard_error)


def wilson_interval(successes: int, trials: int) -> Interval:
    """The share ``successes / trials`` and its 95% Wilson score interval (Wilson 1927): inside
    0..1, and not of zero width at a share of 0 or 1 as the normal interval is; no trials give
    the whole range around 0."""
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must lie in 0..trials, got {successes} of {trials}")
    if trials == 0:
        return Interval(0.0, 0.0, 1.0)
    share = successes / trials
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(share * (1 - share) / trials + z2 / (4 * trials * trials))
    half /= 1 + z2 / trials
    low = 0.0 if successes == 0 else centre - half
    high = 1.0 if successes == trials else centre + half
    return Interval(share, low, high)


def percentile_interval(estimate: float, samples: Sequence[float]) -> Interval:
    """``estimate`` and the 2.5th and 97.5th percentiles of ``samples`` (a bootstrap's)."""
    ordered = sorted(samples)
    last = len(ordered) - 1

    def at(share: float) -> float:
        position = share * last
        below = math.floor(position)
        above = min(below + 1, last)
        return ordered[below] + (ordered[above] - ordered[below]) * (position - below)

    return Interval(estimate, at(0.025), at(0.975))


def normal_cdf(x: float) -> float:
    """P(Z < x) for a standard normal Z."""
    return 0.5 * math.erfc(-x / math.sqrt(2))


def chi_square_tail(statistic: float, degrees: int) -> float:
    """P(X >= ``statistic``) for X chi-square with ``degrees`` degrees of freedom: the
    regularized upper incomplete gamma Q(degrees / 2, statistic / 2), by its series below
    ``a + 1`` and its continued fraction above (Numerical Recipes, 6.2), so that SciPy is not
    needed."""
    if degrees < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {degrees}")
    a, x = degrees / 2, max(statistic, 0.0) / 2
    if x == 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:  # the series of P(a, x)
        term = total = 1 / a
        n = a
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= x / n
            total += term
        return max(0.0, 1 - total * math.exp(log_front))
    tiny = 1e-300  # the continued fraction of Q(a, x), by Lentz's method
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return min(1.0, math.exp(log_front) * h)
