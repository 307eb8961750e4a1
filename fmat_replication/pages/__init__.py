"""The report pages. Each page is one Jinja2 template (``templates/study.html.j2``,
``templates/overview.html.j2``) filled from a context built only from the files its rule declares
(:mod:`.inputs` declares them once; :mod:`.study`, :mod:`.overview` build the context), and
returned as a :class:`.page.Page`, written without Quarto or by Quarto from ``reports/*.qmd``
(:mod:`.render`). The figures are drawn before, by their own rules (:mod:`.drawing`, with
:mod:`.paper_figures` and :mod:`.figures`). What the pages show: the paper's tables with ours in
each cell (:mod:`.tables`), a study file's design in words (:mod:`.design`), the model cards
(:mod:`.cards`)."""
