"""The design file (fairness_assets/core/reference/design.py; issue 34 items 5 and 6): the shipped designs
load with the study's sizes; every bad design is refused with a DesignError naming the file, the line and
the field; the sampled, one-at-a-time and partial factorial grids give the profiles they state; a
conversation template renders and hashes its earlier turns; the values overrides."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from fairness_assets.core.reference import axes
from fairness_assets.core.reference.design import (
    FULL_SET,
    DesignError,
    check_size,
    grid_size,
    load_design,
    with_values,
)
from fairness_assets.core.reference.profiles import design_profiles, full_set, pair_counts
from fairness_assets.core.reference.prompts import as_chat, render_prompts
from resources.settings import TEMPLATES_DIR, AuditGridResource, ConfigError

INSTRUCTION = (TEMPLATES_DIR / "format_instruction.txt").read_text(encoding="utf-8").strip()

# A small valid design: 2 genders x 2 classes x 2 countries, one inline template. The tests replace
# one part at a time (``variant``) and find the offending line by its text (``line_of``).
BASE = """\
name: t
axes:
  gender:
    position: none
    values: [male, female]
  income:
    position: lambda
    values:
      high: {words: high-income, lambda: 0.0001}
      low: {words: low-income, lambda: 0.001}
  country:
    position: home
    values: [Nigeria, India]
grid:
  kind: factorial
  axes: [country, gender, income]
templates:
  - name: q
    question: I am a {gender} student from {country}, and I come from a {income} family. INSTR
runs: 1
models: [m]
""".replace("INSTR", INSTRUCTION)


def variant(old: str, new: str, text: str = BASE) -> str:
    """``text`` with its one occurrence of ``old`` replaced (a test that changes nothing fails here)."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in the design text"
    return text.replace(old, new)


def line_of(text: str, line: str) -> int:
    """The number (1-based) of the one line of ``text`` that is exactly ``line``."""
    found = [i for i, x in enumerate(text.splitlines(), start=1) if x == line]
    assert len(found) == 1, f"{line!r} is not exactly one line of the design text: {found}"
    return found[0]


def write(tmp_path: Path, text: str, name: str = "design.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load(path: Path, templates_dir: Path = TEMPLATES_DIR):
    return load_design(str(path), templates_dir=templates_dir)


def refused(tmp_path: Path, text: str) -> tuple[Path, str]:
    path = write(tmp_path, text)
    with pytest.raises(DesignError) as info:
        load(path)
    return path, str(info.value)


def assert_names(message: str, path: Path, line: int, field: str) -> None:
    """The message starts with ``FILE:LINE: FIELD:``."""
    assert message.startswith(f"{path}:{line}: {field}: "), message


def test_the_base_design_of_these_tests_is_valid(tmp_path):
    design = load(write(tmp_path, BASE))
    assert [a.name for a in design.axes] == ["gender", "income", "country"]
    assert design.grid.axes == ("country", "gender", "income") and grid_size(design) == 8
    assert design.template("q").profile_set == FULL_SET


# ---- the shipped designs ----------------------------------------------------------------------------


def test_the_study_design_loads_with_the_study_sizes():
    study = load_design("study", templates_dir=TEMPLATES_DIR)
    assert study.name == "study"
    assert [a.name for a in study.axes] == ["gender", "economic_class", "nationality"]
    assert len(design_profiles(study)) == 406
    assert study.profile_set_sizes() == {"full": 360, "gender_only": 3, "class_only": 3, "nationality_only": 40}
    size = study.size()
    assert size["prompts_per_model"] == 1126 == grid_size(study)
    assert size["samples_per_model"] == 11260 and size["samples"] == 33780
    assert study.lambdas() == {"high": 0.0001, "middle": 0.0005, "low": 0.001}
    check_size(study)  # under the default limit


def test_the_demo_design_loads():
    demo = load_design("demo", templates_dir=TEMPLATES_DIR)
    assert demo.template_names() == ["base"] and demo.models == ("qwen2.5-0.5b-demo",)
    assert demo.size()["prompts_per_model"] == 12 and len(design_profiles(demo)) == 19
    assert dict(demo.quality) == {"min_match_rate": 0.3}


@pytest.mark.parametrize("name", ["study", "demo"])
def test_a_file_templates_hash_is_the_hash_of_its_file_bytes(name):
    design = load_design(name, templates_dir=TEMPLATES_DIR)
    for t in design.templates:
        path = Path(t.source)
        assert path.parent == TEMPLATES_DIR and path.name == f"{t.name}.yaml"
        assert t.sha256 == hashlib.sha256(path.read_bytes()).hexdigest(), t.name


# ---- bad designs: file, line and field ----------------------------------------------------------------

GENDER_VALUES = "    values: [male, female]"
HIGH = "      high: {words: high-income, lambda: 0.0001}"
QUESTION = next(x for x in BASE.splitlines() if x.startswith("    question:"))

# (id, the line replaced, its replacement, the offending line as written, the field, words of the message)
BAD = [
    (
        "unknown placeholder",
        "from {country},",
        "from {city} in {country},",
        QUESTION.replace("from {country},", "from {city} in {country},"),
        "templates[0].question",
        ["unknown placeholder {city}", "{gender}, {income}, {country}"],
    ),
    (
        "a crossed axis no template uses",
        " and I come from a {income} family.",
        "",
        "  - name: q",
        "templates[0]",
        ["never uses the placeholder of income, which the grid crosses", "no profile set"],
    ),
    (
        "a value without its words",
        GENDER_VALUES,
        "    values: {male: , female: female}",
        "    values: {male: , female: female}",
        "axes.gender.values.male",
        ["value 'male' has no wording"],
    ),
    (
        "a value of a block mapping without its words",
        GENDER_VALUES,
        "    values:\n      male:\n      female: female",
        "      male:",
        "axes.gender.values.male",
        ["value 'male' has no wording"],
    ),
    (
        "a value with a lambda and no words",
        GENDER_VALUES,
        "    values:\n      male: {lambda: 1}\n      female: female",
        "      male: {lambda: 1}",
        "axes.gender.values.male",
        ["value 'male' has no wording"],
    ),
    (
        "a value of a lambda axis without its words",
        HIGH,
        "      high: {lambda: 0.0001}",
        "      high: {lambda: 0.0001}",
        "axes.income.values.high",
        ["value 'high' has no wording"],
    ),
    (
        "a value listed twice",
        GENDER_VALUES,
        "    values: [male, female, male]",
        "    values: [male, female, male]",
        "axes.gender.values[2]",
        ["duplicate value 'male'"],
    ),
    (
        "an unknown position kind",
        "    position: none",
        "    position: far",
        "    position: far",
        "axes.gender.position",
        ["unknown position kind 'far'", "home, lambda, none"],
    ),
    (
        "a lambda axis listing values without lambdas",
        f"    values:\n{HIGH}\n      low: {{words: low-income, lambda: 0.001}}",
        "    values: [high, low]",
        "    values: [high, low]",
        "axes.income.values[0]",
        ["value 'high' of a lambda axis needs its lambda"],
    ),
    (
        "a value of a lambda axis without its lambda",
        HIGH,
        "      high: high-income",
        "      high: high-income",
        "axes.income.values.high",
        ["value 'high' of a lambda axis needs its lambda"],
    ),
    (
        "a second home axis",
        "    position: none",
        "    position: home  # the first home axis",
        "    position: home",  # the country's, the second declared
        "axes.country.position",
        ["a second 'home' axis ('gender' is one)"],
    ),
    (
        "an unknown grid kind",
        "  kind: factorial",
        "  kind: latin_square",
        "  kind: latin_square",
        "grid.kind",
        ["unknown grid kind 'latin_square'", "factorial, sample, one_at_a_time"],
    ),
    (
        "a sample larger than the factorial grid",
        "  kind: factorial",
        "  kind: sample\n  size: 9",
        "  size: 9",
        "grid.size",
        ["a sample of 9 from a factorial grid of 8 profiles"],
    ),
    (
        "turns not ending with the assistant's",
        QUESTION,
        "    turns:\n      - {role: user, content: Hello.}\n" + QUESTION,
        "      - {role: user, content: Hello.}",
        "templates[0].turns[0]",
        ["the earlier turns end with the assistant's"],
    ),
    (
        "turns ending with a second user turn",
        QUESTION,
        "    turns:\n      - {role: user, content: Hello.}\n      - {role: assistant, content: Hi.}\n"
        "      - {role: user, content: Go on.}\n" + QUESTION,
        "      - {role: user, content: Go on.}",
        "templates[0].turns[2]",
        ["the earlier turns end with the assistant's"],
    ),
    (
        "a turn of an unknown role",
        QUESTION,
        "    turns:\n      - {role: operator, content: Hello.}\n" + QUESTION,
        "      - {role: operator, content: Hello.}",
        "templates[0].turns[0]",
        ["a turn is {role: user | assistant, content: text}"],
    ),
    (
        "an unknown top-level key",
        "runs: 1",
        "runs: 1\nrepetitions: 3",
        "repetitions: 3",
        "repetitions",
        ["unknown key 'repetitions'"],
    ),
]


@pytest.mark.parametrize(("old", "new", "line", "field", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_design_is_refused_naming_file_line_and_field(tmp_path, old, new, line, field, words):
    text = variant(old, new)
    path, message = refused(tmp_path, text)
    assert_names(message, path, line_of(text, line), field)
    for w in words:
        assert w in message, message


def test_an_unknown_placeholder_is_located_at_the_question_that_holds_it(tmp_path):
    text = variant("from {country},", "from {city} in {country},")
    path, message = refused(tmp_path, text)
    question = next(x for x in text.splitlines() if x.startswith("    question:"))
    assert_names(message, path, line_of(text, question), "templates[0].question")


def test_an_unknown_placeholder_of_a_template_file_names_the_template_file(tmp_path):
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "format_instruction.txt").write_text(INSTRUCTION + "\n", encoding="utf-8")
    bad = folder / "odd.yaml"
    bad.write_text(f"name: odd\nversion: 1\ntext: I am a {{gender}} student from {{city}}. {INSTRUCTION}\n")
    text = variant("  - name: q\n" + QUESTION + "\n", "  - odd\n")
    path = write(tmp_path, text)
    with pytest.raises(DesignError) as info:
        load(path, templates_dir=folder)
    message = str(info.value)
    assert_names(message, path, line_of(text, "  - odd"), "templates[0]")
    assert f"{bad}: template 'odd': unknown placeholder {{city}}" in message


@pytest.mark.parametrize(
    ("old", "new", "line", "field"),
    [
        (
            GENDER_VALUES,
            "    values:\n      male: male\n      female: female\n      male: man",
            "      male: man",
            "axes.gender.values.male",
        ),
        (
            "  country:\n",
            "  gender:  # again\n    position: none\n    values: [x]\n  country:\n",
            "  gender:  # again",
            "axes.gender",
        ),
    ],
    ids=["a value key twice", "an axis twice"],
)
def test_a_key_written_twice_is_refused(tmp_path, old, new, line, field):
    text = variant(old, new)
    path, message = refused(tmp_path, text)
    assert_names(message, path, line_of(text, line), field)
    assert "twice" in message or "duplicate" in message, message


def test_unreadable_yaml_names_the_line_of_the_syntax_error(tmp_path):
    text = variant("runs: 1", "runs: : 1")
    path, message = refused(tmp_path, text)
    assert message.startswith(f"{path}:{line_of(text, 'runs: : 1')}: not readable YAML ("), message


# ---- the size limit -----------------------------------------------------------------------------------------


def test_a_grid_over_the_prompt_limit_is_refused_naming_its_size_and_the_setting(tmp_path):
    path = write(tmp_path, BASE)
    design = load(path)
    check_size(design, 8)  # at the limit: accepted
    with pytest.raises(DesignError) as info:
        check_size(design, 7)
    message = str(info.value)
    assert_names(message, path, line_of(BASE, "grid:"), "grid")
    assert "8 prompts, over the limit of 7" in message and "FAIRNESS_MAX_PROMPTS" in message

    grid = AuditGridResource(design=str(path), templates_dir=str(TEMPLATES_DIR), max_prompts=7)
    with pytest.raises(ConfigError, match=r"8 prompts, over the limit of 7 .*FAIRNESS_MAX_PROMPTS") as info:
        grid.resolve()
    assert str(info.value).startswith(f"{path}:{line_of(BASE, 'grid:')}: grid: ")


def test_the_study_over_a_lower_limit_is_refused_by_the_audit_grid():
    grid = AuditGridResource(design="study", templates_dir=str(TEMPLATES_DIR), max_prompts=1000)
    with pytest.raises(ConfigError, match=r"study\.yaml:\d+: grid: .*1,126 prompts, over the limit of 1,000") as info:
        grid.resolve()
    assert "FAIRNESS_MAX_PROMPTS" in str(info.value)


# ---- a sampled grid -----------------------------------------------------------------------------------------

SAMPLED = """\
name: sampled
axes:
  gender:
    position: none
    values: [a, b, c]
  income:
    position: lambda
    values:
      high: {words: high-income, lambda: 0.0001}
      mid: {words: middle-income, lambda: 0.0005}
      low: {words: low-income, lambda: 0.001}
  country:
    position: home
    values: [Nigeria, India, Peru, Chile, Fiji, Japan]
grid:
  kind: sample
  axes: [country, gender, income]
  size: 48
  seed: SEED
  pair_coverage: 2
templates:
  - name: q
    question: I am a {gender} student from {country}, and I come from a {income} family. INSTR
""".replace("INSTR", INSTRUCTION)


def sampled(tmp_path: Path, seed: int):
    return load(write(tmp_path, SAMPLED.replace("SEED", str(seed)), f"sampled_{seed}.yaml"))


def test_a_sampled_grid_is_seeded_of_its_size_and_covers_every_pair(tmp_path):
    design = sampled(tmp_path, 7)
    first = design_profiles(design)
    again = design_profiles(sampled(tmp_path, 7))
    other = design_profiles(sampled(tmp_path, 8))
    assert first.equals(again)
    assert set(first["profile_id"]) != set(other["profile_id"])
    for table in (first, other):
        assert len(table) == 48 and table["profile_id"].is_unique and set(table["profile_set"]) == {FULL_SET}
    assert design.profile_set_sizes() == {FULL_SET: 48} and grid_size(design) == 48
    for a, b in [("country", "gender"), ("country", "income"), ("gender", "income")]:
        for table in (first, other):
            counts = pair_counts(table, a, b)
            assert len(counts) == len(design.catalogue.axis(a).values) * len(design.catalogue.axis(b).values)
            assert counts.min() >= 2, (a, b, counts[counts < 2])


PAIRS = variant("  kind: factorial", "  kind: sample\n  size: SIZE\n  seed: SEED\n  pair_coverage: COVER")


def pairs_design(size: int, cover: int, seed: int = 0) -> str:
    return PAIRS.replace("SIZE", str(size)).replace("SEED", str(seed)).replace("COVER", str(cover))


@pytest.mark.parametrize(
    ("size", "cover", "field", "words"),
    [
        (4, 3, "grid.pair_coverage", "3 profiles with country=Nigeria and gender=male cannot be drawn"),
        (3, 1, "grid.size", "3 profiles cannot cover every pair of values 1 times"),
    ],
    ids=["more than the grid holds", "more than the size holds"],
)
def test_a_pair_coverage_that_cannot_be_met_is_refused(tmp_path, size, cover, field, words):
    path = write(tmp_path, pairs_design(size, cover))
    with pytest.raises(DesignError) as info:  # when the design is read, before any profile is used
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:") and f" {field}: " in message and words in message, message


@pytest.mark.parametrize(
    ("size", "cover", "line", "field"),
    [(4, 3, "  pair_coverage: 3", "grid.pair_coverage"), (3, 1, "  size: 3", "grid.size")],
    ids=["more than the grid holds", "more than the size holds"],
)
def test_a_pair_coverage_that_cannot_be_met_is_refused_when_the_design_is_read(tmp_path, size, cover, line, field):
    text = pairs_design(size, cover)
    path, message = refused(tmp_path, text)
    assert_names(message, path, line_of(text, line), field)


@pytest.mark.xfail(
    strict=True,
    reason="the greedy draw of design.sample_rows needs 5-6 profiles to cover every pair of 2x2x2 once for "
    "most seeds, though 4 do (an orthogonal array): a feasible design is refused or accepted by its seed",
)
def test_a_pair_coverage_that_can_be_met_is_met_whatever_the_seed(tmp_path):
    for seed in range(10):
        table = design_profiles(load(write(tmp_path, pairs_design(4, 1, seed), f"s{seed}.yaml")))
        assert len(table) == 4
        for a, b in [("country", "gender"), ("country", "income"), ("gender", "income")]:
            assert pair_counts(table, a, b).min() >= 1


# ---- one-at-a-time and partial factorial grids --------------------------------------------------------------

ONE_AT_A_TIME = variant(
    "  kind: factorial\n  axes: [country, gender, income]\ntemplates:\n  - name: q\n" + QUESTION + "\n",
    "  kind: one_at_a_time\ntemplates:\n"
    f"  - name: g\n    question: I am a {{gender}} student. {INSTRUCTION}\n"
    f"  - name: i\n    question: I come from a {{income}} family. {INSTRUCTION}\n"
    f"  - name: c\n    question: I am a student from {{country}}. {INSTRUCTION}\n",
)


def test_a_one_at_a_time_grid_states_one_axis_a_profile(tmp_path):
    design = load(write(tmp_path, ONE_AT_A_TIME))
    assert design.grid.axes == () and design.grid.one_at_a_time == ("gender", "income", "country")
    assert {t.name: t.profile_set for t in design.templates} == {
        "g": "gender_only",
        "i": "income_only",
        "c": "country_only",
    }
    table = design_profiles(design)
    assert design.profile_set_sizes() == {"gender_only": 2, "income_only": 2, "country_only": 2}
    assert grid_size(design) == 6 and FULL_SET not in set(table["profile_set"])
    for name in ("gender", "income", "country"):
        rows = table[table["profile_set"] == f"{name}_only"]
        assert list(rows[name]) == list(design.catalogue.axis(name).values)
        others = [n for n in ("gender", "income", "country") if n != name]
        assert rows[others].isna().all().all(), rows
    with axes.use(design.catalogue):
        prompts = render_prompts(design.templates, table)
    assert "I come from a low-income family." in set(prompts["prompt"].str.split(" Answer").str[0])


def test_a_one_at_a_time_grid_refuses_a_template_stating_two_axes(tmp_path):
    text = variant("I am a {gender} student.", "I am a {gender} student from {country}.", ONE_AT_A_TIME)
    path, message = refused(tmp_path, text)
    assert_names(message, path, line_of(text, "  - name: g"), "templates[0]")
    assert "states ['country', 'gender']" in message


PARTIAL = variant(
    "  axes: [country, gender, income]\ntemplates:\n  - name: q\n" + QUESTION + "\n",
    "  axes: [country, gender]\n  one_at_a_time: [income]\ntemplates:\n"
    f"  - name: q\n    question: I am a {{gender}} student from {{country}}. {INSTRUCTION}\n"
    f"  - name: i\n    question: I come from a {{income}} family. {INSTRUCTION}\n",
)


def test_a_factorial_over_some_axes_leaves_the_others_unstated(tmp_path):
    design = load(write(tmp_path, PARTIAL))
    assert design.grid.axes == ("country", "gender") and design.grid.one_at_a_time == ("income",)
    assert design.template("q").profile_set == FULL_SET and design.template("i").profile_set == "income_only"
    full = full_set(design)
    assert list(zip(full["country"], full["gender"], strict=True)) == [
        ("Nigeria", "male"),
        ("Nigeria", "female"),
        ("India", "male"),
        ("India", "female"),
    ]  # the first axis varies slowest
    assert full["income"].isna().all()
    assert list(full["profile_id"])[0] == "full:male:nigeria"
    assert design.profile_set_sizes() == {FULL_SET: 4, "income_only": 2} and grid_size(design) == 6
    with axes.use(design.catalogue):
        prompts = render_prompts(design.templates, design_profiles(design))
    assert len(prompts) == 6
    assert prompts["prompt"].iloc[0] == f"I am a male student from Nigeria. {INSTRUCTION}"


def test_a_partial_factorial_refuses_a_template_stating_the_axis_it_does_not_cross(tmp_path):
    text = variant(
        "I am a {gender} student from {country}.", "I am a {gender} {income} student from {country}.", PARTIAL
    )
    path, message = refused(tmp_path, text)
    assert_names(message, path, line_of(text, "  - name: q"), "templates[0]")
    assert "states ['country', 'gender', 'income']" in message


# ---- a conversation template --------------------------------------------------------------------------------

CONVERSATION = variant(
    "  - name: q\n" + QUESTION + "\n",
    "  - name: chat\n"
    "    system: You advise students from {country} on their studies.\n"
    "    turns:\n"
    "      - role: user\n"
    "        content: Hello, I am a {gender} student.\n"
    "      - role: assistant\n"
    "        content: Welcome. How can I help a {gender} student from {country}?\n"
    f"    question: I come from a {{income}} family. {INSTRUCTION}\n",
)


def test_a_conversation_template_renders_its_messages_ending_with_the_question(tmp_path):
    design = load(write(tmp_path, CONVERSATION))
    chat = design.template("chat")
    assert chat.is_conversation and chat.profile_set == FULL_SET
    assert chat.placeholders() == {"gender", "income", "country"}
    messages = json.loads(chat.render({"gender": "female", "income": "low-income", "country": "India"}))
    assert messages == [
        {"role": "system", "content": "You advise students from India on their studies."},
        {"role": "user", "content": "Hello, I am a female student."},
        {"role": "assistant", "content": "Welcome. How can I help a female student from India?"},
        {"role": "user", "content": f"I come from a low-income family. {INSTRUCTION}"},
    ]
    with axes.use(design.catalogue):
        prompts = render_prompts(design.templates, design_profiles(design))
    assert len(prompts) == 8 and set(prompts["template_hash"]) == {chat.sha256}
    for prompt in prompts["prompt"]:
        sent = as_chat(prompt)
        assert isinstance(sent, list) and sent[-1]["role"] == "user" and sent[-1]["content"].endswith(INSTRUCTION)
        assert not any(re.search(r"\{\w+\}", m["content"]) for m in sent), sent


def test_a_conversation_templates_hash_covers_its_earlier_turns_and_system_prompt(tmp_path):
    def sha(text: str, name: str) -> str:
        return load(write(tmp_path, text, name)).template("chat").sha256

    first = sha(CONVERSATION, "a.yaml")
    assert sha(CONVERSATION, "b.yaml") == first  # the content, not the file, is hashed
    turn = variant("How can I help", "What can I do for", CONVERSATION)
    system = variant("on their studies", "on their applications", CONVERSATION)
    assert sha(turn, "turn.yaml") != first
    assert sha(system, "system.yaml") != first
    design, changed = load(write(tmp_path, CONVERSATION, "c.yaml")), load(write(tmp_path, turn, "d.yaml"))
    assert design.as_json() != changed.as_json()  # part of every profile's config hash


# ---- values overrides ---------------------------------------------------------------------------------------


def test_values_overrides_restrict_axes_in_the_order_given():
    demo = load_design("demo", templates_dir=TEMPLATES_DIR)
    chosen = with_values(demo, {"gender": ["transgender", "male"], "economic_class": ["low"]})
    gender, income = chosen.catalogue.axis("gender"), chosen.catalogue.axis("economic_class")
    assert gender.values == ("transgender", "male") and income.values == ("low",)
    assert income.lambdas == (("low", 0.001),) and income.words_of("low") == "low-income"
    assert chosen.catalogue.axis("nationality") == demo.catalogue.axis("nationality")
    assert chosen.profile_set_sizes() == {FULL_SET: 4, "gender_only": 2, "class_only": 1, "nationality_only": 2}
    assert demo.catalogue.axis("gender").values == ("male", "female", "transgender")  # the design is unchanged


def test_a_home_axis_takes_a_country_the_design_does_not_list():
    demo = load_design("demo", templates_dir=TEMPLATES_DIR)
    chosen = with_values(demo, {"nationality": ["Kenya", "Nigeria"]})
    home = chosen.catalogue.axis("nationality")
    assert home.values == ("Kenya", "Nigeria") and home.words_of("Kenya") == "Kenya"
    table = design_profiles(chosen)
    assert set(table["nationality"].dropna()) == {"Kenya", "Nigeria"}
    grid = AuditGridResource(design="demo", templates_dir=str(TEMPLATES_DIR), values={"nationality": ["Kenya"]})
    assert grid.load().catalogue.axis("nationality").values == ("Kenya",)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"gender": ["male", "robot"]}, "axis 'gender' has no value(s) ['robot']"),
        ({"economic_class": ["middle"]}, "axis 'economic_class' has no value(s) ['middle']"),
        ({"gender": []}, "values override of 'gender' is empty"),
        ({"gender": ["male", "male"]}, "values override of 'gender' names a value twice"),
        ({"religion": ["none"]}, "values override names unknown axis 'religion'"),
    ],
    ids=["an unknown value", "a value of a lambda axis the design lacks", "empty", "a value twice", "an unknown axis"],
)
def test_a_bad_values_override_is_refused(overrides, words):
    demo = load_design("demo", templates_dir=TEMPLATES_DIR)
    with pytest.raises(DesignError) as info:
        with_values(demo, overrides)
    assert str(info.value).startswith(f"{demo.path}: ") and words in str(info.value), str(info.value)
    grid = AuditGridResource(design="demo", templates_dir=str(TEMPLATES_DIR), values=overrides)
    with pytest.raises(ConfigError) as info:
        grid.load()
    assert words in str(info.value)
