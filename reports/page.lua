-- The page of a report document (reports/study.qmd, reports/index.qmd): its body is the Quarto
-- markdown the page's template writes, printed by `python3 -m fmat_replication.pages KIND [STUDY]`
-- from the run's files (fmat_replication/pages/__main__.py). Plain Python, no Jupyter kernel:
-- `python3` is the first on PATH (an activated .venv, where fmat_replication is installed).
-- The document's metadata `fmat-page` names the page, `study` the study (`-M study:2A`).
function Pandoc(doc)
  local args = {"-m", "fmat_replication.pages", pandoc.utils.stringify(doc.meta["fmat-page"])}
  if doc.meta["fmat-page"] and pandoc.utils.stringify(doc.meta["fmat-page"]) == "study" then
    table.insert(args, pandoc.utils.stringify(doc.meta.study))
  end
  local markdown = pandoc.pipe("python3", args, "")
  return pandoc.Pandoc(pandoc.read(markdown, "markdown").blocks, doc.meta)
end
