"""Analysis: the papers' tables beside ours, figures, the cross-study, the
planted-bias controls, headline metrics and the run record."""
