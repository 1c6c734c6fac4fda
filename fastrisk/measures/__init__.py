"""Measures: scoring runs against qrels with trec_eval's and gdeval's measures (`metrics`,
measure names in `names`), pooling-bias simulation (`pooling`) and rank agreement between
system orderings (`agreement`)."""
