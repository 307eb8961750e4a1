"""The report pages, as plain functions of the files their rule declares: a study's page
(:mod:`.study`) and the overview (:mod:`.overview`) each return a :class:`.page.Page`, written
without Quarto by a Jinja2 template or by Quarto from ``reports/*.qmd`` (:mod:`.render`). What the
pages show: the paper's tables with ours in each cell (:mod:`.tables`), its figures redrawn
(:mod:`.paper_figures`, :mod:`.figures`), a study file's design in words (:mod:`.design`), the
model cards (:mod:`.cards`); what they read (:mod:`.inputs`)."""
