"""Words that steer a conversation rather than say what it is about: recall never searches them.

"ok the garden plan is done, conclude it" asks to conclude an effort; its words "done" and
"conclude" are in every effort's last lines ("the pool issue is fixed, we're done with it"), so
in a short session they are rare and recall brought back the wrong effort's ending. A recall
needs content words: agreement and thanks, finishing, continuing, pausing and moving on, the
names of effort actions, greetings — in the languages people chat in here (English, French,
German, Spanish, Italian, Portuguese, Czech, Russian) — are never searched, nor are those
languages' commonest function words ("est", "und", "para"). Unspaced scripts
are never recalled by anyway (their character pairs are shorter than recall's shortest word).

Words are compared without diacritics ("terminé" is "termine", as the index reads it), and the
English verbs with their usual forms ("conclude", "concludes", "concluded", "concluding").
"""

from __future__ import annotations

import unicodedata
from functools import cache

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

# The commonest function words of those languages (English ones are the index's stop words and recall's
# common words): in a mostly English session they are rare, and would recall any line that has them.
_FUNCTION_WORDS = """
    est les des une pour pas avec dans sur qui que mais nous vous elle sont ete cette
    und der das ist nicht ein eine auf von den dem des sind wir ich sie
    los las una por para como mas pero esta este eso esto
    che per non una sono questo questa della delle gli
    nao uma com para por mas isso esta sao voce
    jsem jsou bude byl byla jak tak ale
    это что как так все она они мне для
"""


def plain(word: str) -> str:
    """``word`` lower-case without diacritics ("Terminé" → "termine", "Díky" → "diky")."""
    decomposed = unicodedata.normalize("NFD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _verb_forms(verb: str) -> set[str]:
    """A regular English verb's forms: "close" → close, closes, closed, closing."""
    stem = verb[:-1] if verb.endswith("e") else verb
    forms = {verb, f"{verb}s", f"{stem}ed", f"{stem}ing"}
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
    words = {plain(w) for w in (_ENGLISH + _OTHER_LANGUAGES + _FUNCTION_WORDS).split()}
    for verb in _ENGLISH_VERBS.split():
        words |= _verb_forms(verb)
    return frozenset(words)


def is_control_word(word: str) -> bool:
    """Whether ``word`` steers the conversation (done, conclude, thanks, weiter …) rather than names
    what it is about."""
    return plain(word) in control_words()
