"""TREC run files and qrels: parsing, validation and a dense per-topic integer encoding.

The data model (`RunSet`, `Qrels`, the dense per-topic document ids and the official
run ordering) is described in `fastrisk.data.runs.model`.

Modules, each importing only those above it: `ipc` (the saved-file
format), `model` (``RunSet``, ``Qrels``, their alignment), `fields` (the general scan of
a TREC text file) and `doctable` (interned document names), `runfile`, `qrelsfile` (the
compiled run and qrels readers) and `paths` (files to read), `assemble` (runs to a
``RunSet``), `sources` (in-memory frames and dicts), `cache` (the parse cache) and
`read` (the entry points). Their bytes come from `fastrisk.data.textfile`.
"""

from fastrisk.data.runs.model import Judged, Qrels, RunSet, align, encode_rankings
from fastrisk.data.runs.read import read_qrels, read_runs
from fastrisk.errors import RunFileWarning

__all__ = ["Judged", "Qrels", "RunFileWarning", "RunSet", "align", "encode_rankings", "read_qrels", "read_runs"]
