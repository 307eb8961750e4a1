"""What the report pages show (reports/study.py, reports/index.py): the paper's tables with ours in
each cell (:mod:`.tables`), its figures redrawn (:mod:`.paper_figures`, :mod:`.figures`), a study
file's design in words (:mod:`.design`) and the model cards (:mod:`.cards`)."""
