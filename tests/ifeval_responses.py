"""Random responses for IFEval prompts, built to sit on the edges of the constraints.

Each response is assembled from pieces that the constraints look at
(preambles and closing lines that the loose mode removes, ``***`` and blank
line paragraphs, bullets, highlights, titles, placeholders, fenced JSON,
postscripts, abbreviations that may or may not end sentences, capitals,
other languages), mixed with the row's own arguments (its keywords, end
phrase, first word, prompt to repeat), so that each constraint is met about
as often as it is missed.
"""

from __future__ import annotations

import json
import random
from typing import Any

SENTENCES = [
    "The plan is simple and it works.",
    "Dr. Smith arrived at 3 p.m. and left early.",
    "We met in the U.S. last year.",
    "Prices rose by 3.5 percent, e.g. for bread.",
    "Is this the right answer?",
    "What a day!",
    'He said "it is done." Then he left.',
    "Mr. Brown and Mrs. Green agreed... eventually.",
    "This sentence has, a few, commas.",
    "THIS SENTENCE IS SHOUTED IN CAPITALS.",
    "I DON'T think THE U.S.A. is SMALL.",
    "Visit www.example.com for more.",
    "The meeting (see Fig. 2.) ended.",
    "It cost $4.99 at St. Louis Inc. today.",
    "no capital letters in this one.",
    "A short line",
    "The answer is 42 and not 43.",
    "Section headings matter, they said.",
    "Wait... what?! Really.",
    "Jan. 5 was cold; Feb. was colder.",
]

FOREIGN = {
    "fr": "Ceci est une réponse écrite entièrement en français, avec plusieurs phrases. Elle parle du temps.",
    "es": "Esta es una respuesta escrita completamente en español. Habla del clima y de la ciudad.",
    "de": "Dies ist eine Antwort, die vollständig auf Deutsch geschrieben ist. Sie handelt vom Wetter.",
    "it": "Questa è una risposta scritta interamente in italiano. Parla del tempo e della città.",
    "pt": "Esta é uma resposta escrita inteiramente em português. Ela fala sobre o tempo.",
    "ru": "Это ответ, полностью написанный на русском языке. Он рассказывает о погоде.",
    "hi": "यह उत्तर पूरी तरह से हिंदी में लिखा गया है। यह मौसम के बारे में बात करता है।",
    "ko": "이 답변은 완전히 한국어로 작성되었습니다. 날씨에 대해 이야기합니다.",
    "ja": "この回答はすべて日本語で書かれています。天気について話します。",
    "ar": "هذه إجابة مكتوبة بالكامل باللغة العربية. إنها تتحدث عن الطقس.",
    "vi": "Đây là câu trả lời được viết hoàn toàn bằng tiếng Việt. Nó nói về thời tiết.",
    "sw": "Hili ni jibu lililoandikwa kwa Kiswahili kabisa. Linazungumzia hali ya hewa na mji.",
    "fa": "این پاسخ کاملاً به زبان فارسی نوشته شده است. درباره آب و هوا صحبت می کند.",
    "bg": "Това е отговор, написан изцяло на български език. Той говори за времето.",
    "th": "นี่คือคำตอบที่เขียนเป็นภาษาไทยทั้งหมด มันพูดถึงสภาพอากาศ",
    "ta": "இந்த பதில் முழுவதும் தமிழில் எழுதப்பட்டுள்ளது. இது வானிலை பற்றி பேசுகிறது.",
    "fi": "Tämä vastaus on kirjoitettu kokonaan suomeksi. Se kertoo säästä ja kaupungista.",
    "pl": "To jest odpowiedź napisana całkowicie po polsku. Mówi o pogodzie i mieście.",
}

PREAMBLES = ["Sure! Here is my answer:", "Of course.", "**Answer**", "Here you go:", "```json", '"']
CLOSINGS = [
    "Let me know if you need anything else.",
    "P.S. I hope this helps.",
    "P.P.S. One more thing.",
    "p. s. lower case note",
    "Is there anything else I can help with?",
    "```",
    '"',
    "*Thanks!*",
]
MARKDOWN = [
    "* first point",
    "  * indented point",
    "- dash point",
    "*not a bullet*",
    "**bold heading**",
    "* * *",
    "---",
    "*",
    "<<A Fine Title>>",
    "<< >>",
    "<<split\ntitle>>",
    "Dear [name], call [phone].",
    "[unclosed bracket",
    "SECTION 1",
    "Section 2: details",
    "Day 3",
    "PARAGRAPH 1",
    "My answer is yes.",
    "my answer is no.",
    "*highlighted part* and **another one** and * *",
]
SEPARATORS = ["\n\n", "\n***\n", "\n\n***\n\n", "***", "\n* * *\n", "\n", "\n\n\n", " *** "]


def _mutate_case(rng: random.Random, word: str) -> str:
    return rng.choice([word, word.upper(), word.capitalize(), word.lower()])


def _argument_pieces(rng: random.Random, row: dict[str, Any]) -> list[str]:
    pieces: list[str] = []
    for args in row["kwargs"]:
        for key in ("keywords", "forbidden_words"):
            for word in args.get(key) or []:
                if rng.random() < 0.6:
                    pieces.append(rng.choice([_mutate_case(rng, word), f"un{word}ed", f"the {word}."]))
        keyword = args.get("keyword")
        if keyword:
            pieces += [_mutate_case(rng, keyword)] * rng.randint(0, (args.get("frequency") or 3) + 1)
        letter = args.get("letter")
        if letter:
            pieces.append(letter * rng.randint(0, (args.get("let_frequency") or 5) + 1))
    return pieces


def _paragraph(rng: random.Random, row: dict[str, Any]) -> str:
    parts = rng.sample(SENTENCES, rng.randint(1, 5))
    if rng.random() < 0.4:
        parts += rng.sample(MARKDOWN, rng.randint(1, 3))
    parts += rng.sample(_argument_pieces(rng, row) or [""], 1)
    rng.shuffle(parts)
    return rng.choice([" ", "\n"]).join(parts)


def _paragraphs(rng: random.Random, row: dict[str, Any]) -> list[str]:
    wanted = [a.get("num_paragraphs") for a in row["kwargs"] if a.get("num_paragraphs")]
    count = max(1, (wanted[0] if wanted else rng.randint(1, 4)) + rng.choice([-1, 0, 0, 0, 1]))
    paragraphs = [_paragraph(rng, row) for _ in range(count)]
    for args in row["kwargs"]:
        first, nth = args.get("first_word"), args.get("nth_paragraph")
        if first and nth and nth <= len(paragraphs) and rng.random() < 0.7:
            word = rng.choice([first, first.capitalize(), f'"{first.capitalize()},', f"{first}.", f"'{first}"])
            paragraphs[nth - 1] = f"{word} {paragraphs[nth - 1]}"
    return paragraphs


def _near(rng: random.Random, n: int) -> int:
    return max(0, n + rng.choice([-1, 0, 0, 1]))


def _targeted(rng: random.Random, row: dict[str, Any]) -> str | None:
    """A body aimed at one of the row's constraints (met or just missed), or ``None``."""
    pairs = list(zip(row["instruction_id_list"], row["kwargs"]))
    constraint_id, args = rng.choice(pairs)
    kind = constraint_id.split(":")[1]
    if kind == "json_format":
        body = json.dumps({"answer": rng.choice(SENTENCES), "items": rng.sample(SENTENCES, 2)}, indent=2)
        return rng.choice(
            ["```json\n{}\n```", "```JSON\n{}\n```", "{}", "{}\n```", "Here:\n{}", "```\n{}\n```"]
        ).format(body)
    if kind == "multiple_sections":
        name = args["section_spliter"]
        spellings = [f"{name} {{}}", f"{name}{{}}", f"{name} {{}}:", f"{name.lower()} {{}}", f"**{name} {{}}**"]
        form = rng.choice(spellings)
        return "\n\n".join(
            form.format(i) + "\n" + rng.choice(SENTENCES) for i in range(1, _near(rng, args["num_sections"]) + 1)
        )
    if kind == "number_placeholders":
        return " ".join(
            f"[{rng.choice(['name', 'x y', '', 'address'])}] {rng.choice(SENTENCES)}"
            for _ in range(_near(rng, args["num_placeholders"]))
        )
    if kind == "number_bullet_lists":
        marks = rng.choice([["* "], ["- "], ["* ", "- "], ["  * ", "-"]])
        lines = [rng.choice(marks) + rng.choice(SENTENCES) for _ in range(_near(rng, args["num_bullets"]))]
        return rng.choice(["Here is the list:\n", ""]) + "\n".join(lines)
    if kind == "constrained_response":
        return rng.choice(
            ["My answer is yes.", "My answer is maybe.", "My answer is no", "Hmm. My answer is no. Sure."]
        )
    if kind == "nth_paragraph_first_word":
        paragraphs = [rng.choice(SENTENCES) for _ in range(_near(rng, args["num_paragraphs"]))]
        nth = args["nth_paragraph"]
        if nth <= len(paragraphs):
            first = args["first_word"]
            paragraphs[nth - 1] = (
                rng.choice([first, first.title(), f'"{first}', f"{first}:"]) + " " + paragraphs[nth - 1]
            )
        return rng.choice(["\n\n", "\n\n\n", "\n"]).join(paragraphs)
    if kind == "number_highlighted_sections":
        return " ".join(
            rng.choice(["*{}*", "**{}**", "* {} *", "*{}"]).format(rng.choice(SENTENCES)[:20])
            for _ in range(_near(rng, args["num_highlights"]))
        )
    if kind == "number_words":
        words = " ".join(rng.choice(SENTENCES) for _ in range(args["num_words"] // 6 + 1)).split()
        return " ".join(words[: _near(rng, args["num_words"]) + rng.choice([0, 2])])
    if kind == "number_sentences":
        return " ".join(rng.choice(SENTENCES) for _ in range(_near(rng, args["num_sentences"])))
    if kind == "two_responses":
        first = rng.choice(SENTENCES)
        return first + rng.choice(["\n******\n", "******", "\n***\n"]) + rng.choice([first, rng.choice(SENTENCES)])
    if kind == "capital_word_frequency":
        return " ".join(
            rng.choice(["WORD", "I", "U.S.", "don't", "DON'T", "Word", "OK."])
            for _ in range(_near(rng, args["capital_frequency"]))
        )
    return None


def random_response(rng: random.Random, row: dict[str, Any]) -> str:
    """A response to ``row`` (an IFEval input row) that meets some of its constraints and misses others."""
    kwargs = row["kwargs"]
    targeted = _targeted(rng, row) if rng.random() < 0.5 else None
    if targeted is not None:
        return _decorate(rng, row, targeted)
    languages = [a["language"] for a in kwargs if a.get("language")]
    if languages and rng.random() < 0.6:
        body = FOREIGN.get(languages[0], SENTENCES[0]) * rng.randint(1, 3)
    elif rng.random() < 0.08:
        body = json.dumps(
            {"title": rng.choice(SENTENCES), "points": rng.sample(SENTENCES, 2)}, indent=rng.choice([0, 2])
        )
        body = rng.choice(["```json\n{}\n```", "```\n{}\n```", "{}", "Here:\n{}"]).format(body)
    elif rng.random() < 0.1:
        body = rng.choice(SENTENCES) + "\n******\n" + rng.choice([*SENTENCES, ""])
    else:
        paragraphs = _paragraphs(rng, row)
        separator = rng.choice(SEPARATORS)
        body = separator.join(paragraphs)
        if rng.random() < 0.2:
            body = rng.choice(["", "***\n"]) + body + rng.choice(["", "\n***"])
    return _decorate(rng, row, body)


def _decorate(rng: random.Random, row: dict[str, Any], body: str) -> str:
    kwargs = row["kwargs"]
    ids = row["instruction_id_list"]
    if rng.random() < 0.3:
        body = rng.choice(PREAMBLES) + "\n" + body
    if rng.random() < 0.3:
        body = body + "\n" + rng.choice(CLOSINGS)
    for args in kwargs:
        phrase = args.get("end_phrase")
        if phrase and rng.random() < 0.6:
            body += rng.choice([" ", "\n"]) + rng.choice(
                [phrase, phrase.upper(), f'{phrase}"', f"{phrase} ", f"{phrase}."]
            )
        prompt = args.get("prompt_to_repeat")
        if prompt and rng.random() < 0.6:
            body = rng.choice(["", " ", "\n"]) + rng.choice([prompt, prompt.lower(), prompt[:-1]]) + "\n" + body
        marker = args.get("postscript_marker")
        if marker and rng.random() < 0.5:
            body += "\n\n" + rng.choice([marker, marker.lower(), marker.replace(".", ". ")]) + " a note"
    if "detectable_format:title" in ids and rng.random() < 0.5:
        body = rng.choice(["<<A Title>>\n", "<<>>\n", "<< x >> ", "<<Title\n>>"]) + body
    transform = rng.random()
    upper = 0.5 if "change_case:english_capital" in ids else 0.12
    lower = upper + (0.5 if "change_case:english_lowercase" in ids else 0.12)
    if transform < upper:
        body = body.upper()
    elif transform < lower:
        body = body.lower()
    elif transform < 0.3:
        body = body.replace(",", "")
    if rng.random() < (0.5 if "startend:quotation" in ids else 0.1):
        body = rng.choice(['"{}"', '"{}" ', ' "{}\n"', '"{}'.replace("{}", "{}")]).format(body)
    if rng.random() < 0.05:
        body = rng.choice(["", " ", "\n", "*"])
    return body
