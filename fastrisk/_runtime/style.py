"""The figure style shared by `fastrisk.viz.plot` and the figures of `fastrisk.ltr`
(no matplotlib here: constants only)."""

#: Okabe & Ito (2008) colour-blind-safe palette, most contrasting colours first (yellow last).
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")
#: Colours of significant losses and wins (vermillion and bluish green of Okabe-Ito).
LOSS_COLOR, WIN_COLOR, NEUTRAL_COLOR, CRITICAL_COLOR = "#D55E00", "#009E73", "#7F7F7F", "#444444"

#: Font sizes (points) for figures this module creates: readable when a 3.5-inch-wide figure
#: is printed at the width of one column.
FONT_SIZE, SMALL_FONT_SIZE = 8.0, 7.0
COLUMN_FIGSIZE = (3.5, 2.6)
WIDE_FIGSIZE = (7.2, 2.8)
