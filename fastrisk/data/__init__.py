"""Data: the score matrix (`matrix`), matrix files (`io`), TREC runs and qrels (`runs`), the
bundled collections (`datasets`), and the result model every result class shares (`results`,
`publication`, `tabular`, `streaming`)."""
