"""Measures: scoring runs against qrels with trec_eval's and gdeval's measures (`metrics`,
measure names in `names`), pooling-bias simulation (`pooling`) and rank agreement between
system orderings (`agreement`)."""

from fastrisk._moved import lazy_submodules

__getattr__ = lazy_submodules(__name__)
