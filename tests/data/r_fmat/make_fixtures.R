# Regenerates the R reference tables in this folder (run from this folder):
#   Rscript make_fixtures.R
# Made with R 4.2.2, data.table 1.14.8, forcats 1.0.0, plyr 1.8.8, purrr 1.0.1 and the
# FMAT_query / FMAT_query_bind / summary.fmat functions of FMAT 2026.1 (R/FMAT.R). FMAT itself
# could not be installed offline, so those functions were sourced from its R/FMAT.R; with the
# package installed, library(FMAT) below does the same.
suppressMessages({library(FMAT); library(data.table)})
out = "./"

# ---- query tables: R write.csv (row names, all strings quoted) and one fwrite (no quotes)
q_m = FMAT_query("[MASK] is a nurse.", MASK = .(Male=c("He","Man"), Female=c("She","Woman")))
write.csv(q_m, paste0(out, "query_M.csv"))
q_mt = FMAT_query(c("[MASK] is {TARGET}.", "[MASK] works as {TARGET}."),
  MASK = .(Male=c("He","Man"), Female=c("She","Woman")),
  TARGET = .(MaleOcc=c("a doctor","an engineer"), FemaleOcc=c("a nurse","a teacher")))
write.csv(q_mt, paste0(out, "query_MT.csv"))
fwrite(q_mt, paste0(out, "query_MT_fwrite.csv"))
q_ma = FMAT_query("The [MASK] {ATTRIB}.",
  MASK = .(Male=c("man","boy"), Female=c("woman","girl")),
  ATTRIB = .(Masc=c("is masculine", "says \"hi, there\""), Femi=c("is feminine", "has a feminine personality")))
write.csv(q_ma, paste0(out, "query_MA.csv"))
q_mta = FMAT_query(c("The [MASK] {TARGET} {ATTRIB}.", "A [MASK] {TARGET} {ATTRIB}."),
  MASK = .(Male=c("man","boy"), Female=c("woman","girl")),
  TARGET = .(T1=c("x1","x2"), T2=c("y1","y2","y3")),
  ATTRIB = .(A1=c("a","b"), A2=c("c")))
write.csv(q_mta, paste0(out, "query_MTA.csv"))
q_bind = FMAT_query_bind(
  FMAT_query("[MASK] is {TARGET}.", MASK = .(Male="He", Female="She"),
             TARGET = .(Occupation=c("a doctor", "a nurse", "an artist"))),
  FMAT_query("[MASK] occupation is {TARGET}.", MASK = .(Male="His", Female="Her"),
             TARGET = .(Occupation=c("doctor", "nurse", "artist"))))
write.csv(q_bind, paste0(out, "query_bind_MT.csv"))
q_years = FMAT_query("In {TARGET}, [MASK] was rich.", MASK=.(Male="he", Female="she"), TARGET=.(Year=1998:2000))
write.csv(q_years, paste0(out, "query_MT_years.csv"))

# ---- fake scores (two models, random probabilities) and summary() for every pairing option
set.seed(2024)
fake_run = function(q, name) {
  type = attr(q, "type")
  d = rbindlist(lapply(c("m1", "m2"), function(m) cbind(data.table(model=m), q)))
  d$model = forcats::as_factor(d$model)
  d$output = "x"; d$token = as.character(d$M_word)
  d$prob = round(runif(nrow(d), 0.001, 0.3), 6)
  attr(d, "type") = type
  class(d) = c("fmat", class(d))
  write.csv(d, paste0(out, "scores_", name, ".csv"))
  for (mp in c(TRUE, FALSE)) for (tp in c(TRUE, FALSE)) for (ap in c(TRUE, FALSE)) {
    if (type == "M" && !(tp && ap)) next
    if (type == "MT" && !ap) next
    if (type == "MA" && !tp) next
    s = summary(d, mask.pair=mp, target.pair=tp, attrib.pair=ap, warning=FALSE)
    f = paste0(out, "lpr_", name, "_", substr(mp,1,1), substr(tp,1,1), substr(ap,1,1), ".csv")
    fwrite(s, f, quote=TRUE)
  }
}
fake_run(q_m, "M")
fake_run(q_mt, "MT")
fake_run(FMAT_query("The [MASK] {ATTRIB}.",
  MASK = .(Male=c("man","boy"), Female=c("woman","girl")),
  ATTRIB = .(Masc=c("is masculine", "is strong"), Femi=c("is feminine", "is gentle"))), "MA")
fake_run(FMAT_query(c("The [MASK] {TARGET} {ATTRIB}.", "A [MASK] {TARGET} {ATTRIB}."),
  MASK = .(Male=c("man","boy"), Female=c("woman","girl")),
  TARGET = .(T1=c("x1","x2"), T2=c("y1","y2")),
  ATTRIB = .(A1=c("a","b"), A2=c("c","d"))), "MTA")
