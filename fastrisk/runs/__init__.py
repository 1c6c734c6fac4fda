"""TREC run files and qrels: parsing, validation and a dense per-topic integer encoding.

A `RunSet` holds every system's ranking for every topic as one ``(S, T, D)`` int32
array of *dense per-topic document ids* (``-1`` pads rankings shorter than ``D``). Within a
topic, ids are assigned in order of each document's best rank over all systems (ties by
system order), so the documents of any depth-``k`` pool are exactly the ids below
``RunSet.pool_size(k)[t]``; the pooling kernels rely on that. The id -> document name
vocabulary of each topic is a pyarrow string array (``RunSet.to_arrow()`` gives the long
table with dictionary-encoded ``docid``).

Rankings follow the official TREC scripts (trec_eval, gdeval): a run is ordered by score
descending, ties broken by document id descending; the rank column is read and validated
but otherwise ignored.

Modules, each importing only those above it: `ipc` (the saved-file
format), `model` (``RunSet``, ``Qrels``, their alignment),
`text` (the compiled text readers), `sources`
(in-memory frames and dicts), `cache` (the parse cache) and
`read` (the entry points).
"""

from fastrisk.errors import RunFileWarning
from fastrisk.runs.model import Judged, Qrels, RunSet, align, encode_rankings
from fastrisk.runs.read import read_qrels, read_runs

__all__ = ["Judged", "Qrels", "RunFileWarning", "RunSet", "align", "encode_rankings", "read_qrels", "read_runs"]
