"""Words: how ccm-tui cuts text into words, and the named sets of words it passes over.

One tokenizer family (lower-case words of any script):

* :func:`words`: runs of letters and digits, split at everything else ("auth-bug" is ``auth``,
  ``bug``), as the search index reads spaced text (:mod:`..search`'s segments are these runs, with
  unspaced scripts cut further). Effort ids and summary keywords are matched on them.
* :func:`written_words`: words as written, an inner apostrophe or hyphen kept ("don't", "auth-bug").
* :func:`content_words`: written words less :data:`CHAT_FILLER_WORDS` and 1–2 letter words, their
  plural stripped (:func:`stem`): what the offline segmenter and summarizer compare.

Named sets, each saying who passes over it:

* :data:`FUNCTION_WORDS`: English function words (Lucene's classic stop set) and question words: the
  search never searches them alone. Ranking and the search benchmarks depend on it word for word.
* :data:`COMMON_WORDS` (⊇ FUNCTION_WORDS): words any message may use ("how long should ..."): recall
  never searches by them, nor are they an effort's summary keyword (salience:
  :data:`KEYWORD_STOP_WORDS`, with the :data:`SUMMARY_WORDS` every summary uses).
* :data:`CHAT_FILLER_WORDS`: English chat and coding-agent filler, contractions, and a few Czech,
  German and Spanish function words (real transcripts are multilingual): the segmenter's stop words.
* control words (:func:`is_control_word`): words that steer a conversation rather than say what it is
  about ("done", "conclude", "weiter"), in the languages people chat in here: recall never searches them.

Deliberately small and dependency-free; everything here is deterministic.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache

_RUN = re.compile(r"[^\W_]+", re.UNICODE)
WORD_RE = re.compile(r"[^\W\d_][\w'’-]*[^\W_]|[^\W\d_]", re.UNICODE)
FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)

# --------------------------------------------------------------------------- word sets
#: Never searched alone: they still join their neighbours in word pairs ("the who", "support a group" keep
#: their phrases), and a query made of nothing else searches them after all.
FUNCTION_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these"
    " they this to was will with what when where which who whom whose why how".split()
)

#: Words any message may use, however rarely a short session has used them ("how long should ...", "all
#: for now"): they say nothing about what it asks for (recall never searches by them) or what an effort is
#: about (never a keyword of its summary). The function words, and everyday English beside them.
COMMON_WORDS = FUNCTION_WORDS | frozenset(
    """
    a about above after again against all almost also always am among an and another any anything are
    around as at back be because been before being below best better between both but by came can cannot
    come could day days did do does doing done down during each either else enough even ever every few
    first for from further get gets getting give given goes going good got great had has have having he
    her here hers herself him himself his how however i if in into is it its itself just keep know last
    later least less let like little long look lot lots made make makes many may maybe me might more
    most much must my myself need needs never new next no nor not now of off often on once one only or
    other others our ours ourselves out over own part per please put quite rather really right said same
    say says see seem she should show since so some something still such sure take tell than thank
    thanks that the their theirs them themselves then there these they thing things think this those
    though through time times to today too try two under until up upon us use used using very via want
    was way ways we well went were what when where whether which while who whom whose why will with
    within without would yes yet you your yours yourself yourselves
    """.split()
)

#: How summaries talk about efforts ("the user asked", "we discussed", "fixed", "left open").
SUMMARY_WORDS = frozenset(
    """
    effort efforts user users assistant discussed discussion conversation concluded summary summaries
    work worked working help helped asked asks question questions answer answered answers issue
    issues fixed fix added add set found final finally still left open time first second last next
    """.split()
)

#: Never a keyword of an effort's summary (salience): too common, or how every summary talks.
KEYWORD_STOP_WORDS = COMMON_WORDS | SUMMARY_WORDS

#: What the offline segmenter and summarizer leave out of a turn's words (:func:`content_words`).
CHAT_FILLER_WORDS = frozenset(
    """
    a about above after again against all almost also although always am among an and another any anyone
    anything are aren't around as at away back be because been before being below best better between both
    but by can can't cannot could couldn't did didn't do does doesn't doing don't done down during each
    either else enough even ever every everything few for from further get gets getting give given go goes
    going gone good got great had hadn't has hasn't have haven't having he her here hers herself him himself
    his how however i i'd i'll i'm i've if in into is isn't it it's its itself just keep know last least
    less let let's like likely lot make makes making many may maybe me might mine more most much must my
    myself need needs never new next no nor not nothing now of off often ok okay on once one only onto or
    other others our ours ourselves out over own per perhaps please put quite rather really right said same
    say see seem seems shall she should shouldn't show since so some something still such sure take than
    thank thanks that that's the their theirs them themselves then there there's these they they're thing
    things think this those though through thus to too try trying two under until up upon us use used using
    very via want wants was wasn't way we we'll we're we've well were weren't what what's when where whether
    which while who whom whose why will with within without won't would wouldn't yes yet you you'd you'll
    you're you've your yours yourself yourselves yeah sorry hey hi hello sweet cool good awesome nice
    let lets go got gonna wanna ll ve re didn doesn isn wasn don won couldn shouldn wouldn
    here's there's it'll that'll i’m it’s let’s don’t can’t
    user assistant agent claude tool tools output result results file files line lines code run running
    now first also again fine work works worked working looks look looking want wanted able actually
    already instead currently check checked checking update updated updating add added adding change
    changes changed create created creating implement implemented implementing fix fixed fixing issue
    issues problem problems step steps
    je to se na že ale pro jak tak jsem jsi jsou bude byl byla bylo nebo když jako které který která
    mám máme mi ti tu ten ta co už jen jestli potřebuju pojdme pokračujme ted teď
    der die das und ist nicht ein eine mit auf für von zu den dem des
    el la los las que de en por para con una uno como más pero
    """.split()
)


# --------------------------------------------------------------------------- tokenizers
def words(text: str) -> list[str]:
    """The runs of letters and digits of ``text``, lower-case ("auth-bug #2" → auth, bug, 2)."""
    return [w.lower() for w in _RUN.findall(text or "")]


def written_words(text: str) -> Iterator[str]:
    """The words of ``text`` as written, lower-case: a letter first, an inner apostrophe or hyphen kept
    ("Don't re-run it" → don't, re-run, it)."""
    for match in WORD_RE.finditer(text.lower()):
        yield match.group(0).strip("'’-")


def content_words(text: str) -> list[str]:
    """Content words of a text: lowercase, stopwords and 1–2 letter words dropped, stemmed."""
    return [stem(w) for w in written_words(text) if len(w) >= 3 and w not in CHAT_FILLER_WORDS]


def strip_code(text: str) -> str:
    """Text with fenced code blocks removed (they drown the topic words in identifiers)."""
    return FENCE_RE.sub(" ", text)


def stem(word: str) -> str:
    """A very light stemmer: plural -s/-es, so 'tests' and 'test' meet."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


# --------------------------------------------------------------------------- control words
# "ok the garden plan is done, conclude it" asks to conclude an effort; its words "done" and "conclude"
# are in every effort's last lines ("the pool issue is fixed, we're done with it"), so in a short session
# they are rare and recall brought back the wrong effort's ending. A recall needs content words:
# agreement and thanks, finishing, continuing, pausing and moving on, the names of effort actions,
# greetings — in English, French, German, Spanish, Italian, Portuguese, Czech, Russian — are never
# searched, nor are those languages' commonest function words ("est", "und", "para"). Unspaced scripts
# are never recalled by anyway (their character pairs are shorter than recall's shortest word). Words are
# compared without diacritics ("terminé" is "termine", as the index reads it), and the English verbs
# with their usual forms ("conclude", "concludes", "concluded", "concluding").

# English verbs of steering a conversation or an effort; their -s, -ed and -ing forms count too.
_ENGLISH_VERBS = """
    accept agree approve begin cancel carry close collapse complete conclude confirm continue end expand
    finish fix forget go open pause proceed quit reopen restart resume resolve settle skip solve start stop
    summarise summarize switch thank wait wrap
"""

_ENGLISH = """
    ok okay okey alright fine yes yeah yep yup sure nope thanks thx cheers please pls plz
    done finished finally complete completed over again later tomorrow tonight soon next
    previous back now anyway actually also already just still ready good great perfect awesome
    cool nice excellent wonderful brilliant lovely right correct exactly indeed
    hello hey hiya bye goodbye morning evening night effort efforts topic topics conversation
    chat discussion summary issue issues problem problems thing things stuff
"""

_OTHER_LANGUAGES = """
    merci oui non bon bien fini finie finis termine terminee terminer terminons fait faite fermer
    ferme fermons conclure conclus conclu continue continuer continuons suivant suivante suite
    arrete arreter arretons pause plus tard encore reprendre reprenons regle resolu corrige voila
    accord plait stp svp salut bonjour bonsoir allez allons sujet

    danke bitte fertig erledigt abschliessen abgeschlossen schliessen schliess beenden beendet
    weiter weitermachen machen naechste naechstes nachste nachstes spater spaeter stopp pause wieder
    nochmal gelost geloest behoben okay gut genau jetzt thema hallo tschuss tschuess

    gracias favor listo lista hecho hecha terminado terminada terminar termina cerrar cierra
    concluir concluye continuar continua continuamos sigue seguir siguiente luego despues tarde
    parar pausa vez resuelto arreglado vale bueno hola adios tema

    grazie prego fatto fatta finito finita terminato chiudere chiudi concludere concludi
    continuare avanti prossimo prossima dopo ferma fermati ancora nuovo risolto sistemato bene
    ciao argomento

    obrigado obrigada pronto feito terminado fechar fecha concluir continuar proximo depois mais
    parar novo resolvido corrigido beleza valeu sim nao ola tchau assunto

    diky dekuji dekujeme prosim hotovo hotove dokonceno dokonci uzavri uzavrit zavri zavrit
    pokracuj pokracujme pokracovat dalsi pozdeji pauza znovu opraveno vyreseno dobre ano
    ahoj tema

    спасибо пожалуйста готово закончили закончить закончим закрой закрыть закроем продолжай
    продолжить продолжим дальше следующий следующая потом позже стоп пауза снова опять
    исправлено решено хорошо ладно окей привет пока тема
"""

# The commonest function words of those languages (English ones are FUNCTION_WORDS and COMMON_WORDS): in a
# mostly English session they are rare, and would recall any line that has them.
_FOREIGN_FUNCTION_WORDS = """
    est les des une pour pas avec dans sur qui que mais nous vous elle sont ete cette
    und der das ist nicht ein eine auf von den dem des sind wir ich sie
    los las una por para como mas pero esta este eso esto
    che per non una sono questo questa della delle gli
    nao uma com para por mas isso esta sao voce
    jsem jsou bude byl byla jak tak ale
    это что как так все она они мне для
"""


def without_accents(word: str) -> str:
    """``word`` lower-case without diacritics ("Terminé" → "termine", "Díky" → "diky")."""
    decomposed = unicodedata.normalize("NFD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _verb_forms(verb: str) -> set[str]:
    """A regular English verb's forms: "close" → close, closes, closed, closing."""
    base = verb[:-1] if verb.endswith("e") else verb
    forms = {verb, f"{verb}s", f"{base}ed", f"{base}ing"}
    if verb.endswith(("x", "sh", "ch", "ss")):
        forms.add(f"{verb}es")
    if verb in ("stop", "wrap", "quit"):  # a doubled consonant
        forms |= {f"{verb}{verb[-1]}ed", f"{verb}{verb[-1]}ing"}
    if verb == "go":
        forms |= {"goes", "gone", "went"}
    return forms


@cache
def control_words() -> frozenset[str]:
    """Every control word, without diacritics."""
    found = {without_accents(w) for w in (_ENGLISH + _OTHER_LANGUAGES + _FOREIGN_FUNCTION_WORDS).split()}
    for verb in _ENGLISH_VERBS.split():
        found |= _verb_forms(verb)
    return frozenset(found)


def is_control_word(word: str) -> bool:
    """Whether ``word`` steers the conversation (done, conclude, thanks, weiter …) rather than names
    what it is about."""
    return without_accents(word) in control_words()


# --------------------------------------------------------------------------- weights
def document_frequencies(docs: Iterable[Iterable[str]]) -> Counter[str]:
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(set(doc))
    return df


def idf(df: Counter[str], n_docs: int) -> dict[str, float]:
    """Smoothed inverse document frequency: log((1 + N) / (1 + df)) + 1."""
    return {term: math.log((1 + n_docs) / (1 + count)) + 1.0 for term, count in df.items()}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    dot = sum(v * b.get(k, 0.0) for k, v in a.items())
    if dot == 0.0:
        return 0.0
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0
