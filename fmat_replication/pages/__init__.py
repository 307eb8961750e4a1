"""The report pages: each a Jinja2 template (``templates/study.html.j2``, ``overview.html.j2``)
filled from the files its rule declares (:mod:`.inputs`; the context: :mod:`.study`,
:mod:`.overview`), a :class:`.page.Page` written with or without Quarto (:mod:`.render`). The
figures are drawn before, by their own rules (:mod:`.drawing`, with :mod:`.paper_figures` and
:mod:`.figures`). The paper's tables with ours in each cell: :mod:`.tables`; a study file's design
in words: :mod:`.design`; the model cards: :mod:`.cards`."""
