"""Data: the score matrix (`matrix`), matrix files (`io`), TREC runs and qrels (`runs`), the
bundled collections (`datasets`), and the result model every result class shares (`results`,
`publication`, `tabular`, `streaming`)."""

from fastrisk._moved import lazy_submodules

__getattr__ = lazy_submodules(__name__)
