"""The extractive answerer: which evidence it cites and what it quotes, checked by the real citation checker."""

from __future__ import annotations

from sift.graph.checker import FileFacts, check_draft
from sift.graph.models import Evidence
from sift.graph.planner import plan_question, question_type
from sift.graph.writer.abstention import ABSENT_FROM_CORPUS, NEAR_IN_MEANING
from sift.graph.writer.code_reading import members
from sift.graph.writer.doc_quotes import quotable
from sift.graph.writer.extractive import write_extractive
from sift.graph.writer.selection import rank_evidence, select_evidence
from sift.models import display_name


def ev(n: int, path: str, name: str, text: str, score: float, kind: str = "function", start: int = 1,
       part: int | None = None) -> Evidence:
    return Evidence(id=n, path=path, start_line=start, end_line=start + len(text.splitlines()) - 1, kind=kind,
                    name=display_name(name, part), symbol=name, part=part, score=score, text=text,
                    content_hash=f"h-{path}")


def facts(*items: Evidence) -> dict[str, FileFacts]:
    return {e.path: FileFacts(10_000, e.content_hash) for e in items}


FIELD_EMAIL = ev(1, "src/pkg/fields.py", "Email", 'class Email(String):\n    """An email field."""\n'
                 '    default_error_messages = {"invalid": "Not a valid email address."}', 0.090, start=1769)
VALIDATE_EMAIL = ev(2, "src/pkg/validate.py", "Email", 'class Email(Validator):\n    """Validate an email '
                    'address."""\n    USER_REGEX = re.compile(r"^[-a-z0-9]+$")\n    def __call__(self, value):\n'
                    '        if not self.USER_REGEX.match(value):\n            raise ValidationError(value)',
                    0.085, start=242)


def test_list_question_cites_the_subclasses_of_a_base_class() -> None:
    base = ev(1, "src/pkg/validate.py", "Validator", 'class Validator(ABC):\n    """Abstract base class for '
              'validators."""', 0.079, start=21)
    rng = ev(2, "src/pkg/validate.py", "Range", 'class Range(Validator):\n    """Validator the library provides: '
             'it succeeds if the value is within a range."""', 0.047, start=302)
    length = ev(3, "src/pkg/validate.py", "Length", 'class Length(Validator):\n    """Validator the library '
                'provides: it succeeds if the value has a length between a minimum and maximum."""', 0.037, start=382)
    plan = plan_question("What validators does the library provide out of the box?", "kb")
    assert plan.question_type == "list"
    draft = write_extractive(plan, [base, rng, length], {})
    assert {c.evidence_id for c in draft.citations} == {2, 3}
    assert "Range" in draft.text and "Length" in draft.text
    assert check_draft(draft, [base, rng, length], facts(base), 1).ok


def test_list_question_cites_sibling_definitions_not_their_methods() -> None:
    items = [ev(1, "f.py", "IPInterface", 'class IPInterface(Field):\n    """An IP interface field."""', 0.08, start=10),
             ev(2, "f.py", "IPInterface._deserialize", "def _deserialize(self, value):\n    return ip_interface(value)",
                0.079, start=20),
             ev(3, "f.py", "IPv4Address", 'class IPv4Address(Field):\n    """An IPv4 address field."""', 0.075,
                start=30)]
    plan = plan_question("What field types exist for IP addresses and interfaces?", "kb")
    chosen = select_evidence(plan, items, {})
    assert [e.name for e in chosen] == ["IPInterface", "IPv4Address"]


def test_quoted_code_lines_never_break_the_checker() -> None:
    assert quotable("if value in self.truthy:")
    assert not quotable('msg = "The argument is deprecated. "')  # a sentence end inside the quote
    assert not quotable("first = values[0]")  # reads like a citation marker
    body = ('def load_fields(self, required, partial):\n    """Load the fields, required or partial."""\n'
            '    msg = "Required fields are missing. " + str(required)\n    first = partial[0]\n'
            '    if required and not partial:\n        return self.fields')
    e = ev(1, "pkg/schema.py", "Schema.load_fields", body, 0.1, start=40)
    plan = plan_question("How are required fields loaded when partial is set?", "kb")
    draft = write_extractive(plan, [e], {})
    # In a fenced block under the signature a sentence end inside a line is safe (line 42), a "[0]" is not (43).
    assert "```python\ndef load_fields(self, required, partial):\n    ...\n" \
           '    msg = "Required fields are missing. " + str(required)\n    ...\n    if required and not partial:\n' \
           "        return self.fields\n```" in draft.text
    assert "partial[0]" not in draft.text
    assert check_draft(draft, [e], facts(e), 1).ok


def test_later_part_of_a_definition_is_not_named_as_a_symbol_it_only_mentions() -> None:
    e = ev(1, "src/pkg/_next_gen.py", "define", "    on_setattr: the hooks run when an attribute is set.\n"
           "    Attributes are defined in the class body.\n    slots = True", 0.2, start=143, part=2)
    plan = plan_question("Where is the define decorator implemented?", "kb")
    draft = write_extractive(plan, [e], {})
    assert "`define`" not in draft.text and "Its signature" not in draft.text
    assert check_draft(draft, [e], facts(e), 1).ok


def test_questions_asking_what_a_library_provides_are_lists() -> None:
    assert question_type("What validators does the library provide out of the box?", False) == "list"
    assert question_type("Which options can be set in a schema's `class Meta`?", False) == "list"
    assert question_type("What does the validator do with an empty string?", False) != "list"


def test_class_body_members_are_named_and_checkable() -> None:
    text = ('class Meta:\n    """Options object for a Schema."""\n\n    fields: ClassVar[tuple[str, ...]]\n'
            '    """Fields to include.\n    Several lines of text.\n    """\n    unknown: ClassVar[str]\n'
            '    """Whether to exclude, include, or raise an error for unknown fields."""\n'
            '    load_only = ()\n\n    def __init__(self, meta):\n        self.ordered = meta\n')
    e = ev(1, "src/pkg/schema.py", "Schema.Meta", text, 0.1, start=346)
    assert members(e) == ["fields", "unknown", "load_only", "__init__"]
    plan = plan_question("Which options can be set in a schema's `class Meta`?", "kb")
    draft = write_extractive(plan, [e], {})
    assert "`unknown`" in draft.text and "`load_only`" in draft.text and "(class)" in draft.text
    assert check_draft(draft, [e], facts(e), 1).ok
    assert members(ev(2, "f.py", "load", "def load(self):\n    x = 1\n    return x", 0.1)) == []


def test_parts_of_one_section_are_cited_together() -> None:
    first = ev(1, "docs/nesting.rst", "Nesting a schema within itself", "If the object to be marshalled has a "
               "relationship to an object of the same type, you can nest the Schema within itself by passing a "
               "lambda that returns the schema.\n\n    friends = fields.List(fields.Nested(lambda: UserSchema()))",
               0.061, kind="doc", start=266)
    second = ev(2, "docs/nesting.rst", "Nesting a schema within itself", "Nesting a schema within itself, with "
                "the user's friends:\n\n    result = UserSchema().dump(user)", 0.064, kind="doc", start=281)
    other = ev(3, "docs/nesting.rst", "Nesting schemas", "Schemas can be nested to represent relationships "
               "between objects.", 0.059, kind="doc", start=1)
    plan = plan_question("How do I nest a schema inside itself, for example a user whose friends are users?", "kb")
    draft = write_extractive(plan, [second, first, other], {})
    assert sorted(c.evidence_id for c in draft.citations) == [1, 2]
    assert "lambda" in draft.text


def test_the_part_that_goes_on_from_the_cited_one_comes_before_higher_ranked_parts() -> None:
    # Four chunks of one long section: the first ranks, two far parts outrank the one that continues it.
    text = "Keys that would shadow a built-in name are left out of the parsed result."
    first = ev(1, "README.md", "Parsing objects", text, 0.09, kind="doc", start=34)
    far = [ev(n, "README.md", "Parsing objects", f"Parsing objects nested {n} deep keeps the result an object.",
              0.08 - n / 100, kind="doc", start=90 + 10 * n) for n in (2, 3)]
    after = ev(4, "README.md", "Parsing objects", "To keep those keys in the parsed result, set keepShadowed.",
               0.01, kind="doc", start=36)
    plan = plan_question("Why are keys left out of the parsed object result?", "kb")
    chosen = select_evidence(plan, [first, *far, after], {})
    assert [e.id for e in chosen] == [1, 4, 2]


def test_weak_evidence_and_a_word_the_corpus_lacks_end_the_search() -> None:
    e = ev(1, "src/pkg/fields.py", "Number", 'class Number(Field):\n    """Base class for number fields."""', 0.07)
    plan = plan_question("Is there a built-in field type for phone numbers?", "kb")
    idf = {"\x00absent": 8.5, "phone": 8.5, "built": 6.5, "field": 0.4, "type": 2.1, "number": 3.6}
    draft = write_extractive(plan, [e], idf)
    assert draft.not_found and draft.note == ABSENT_FROM_CORPUS
    draft = write_extractive(plan, [e], {**idf, "phone": 7.0})  # rare, but some chunk has it: keep looking
    assert draft.not_found and draft.note != ABSENT_FROM_CORPUS


def test_near_in_meaning_answers_from_the_first_item_without_the_lexical_abstention() -> None:
    e = ev(1, "src/pkg/fields.py", "Number", 'class Number(Field):\n    """Base class for number fields."""', 0.07)
    plan = plan_question("Is there a built-in field type for phone numbers?", "kb")
    idf = {"\x00absent": 8.5, "phone": 8.5, "built": 6.5, "field": 0.4, "type": 2.1, "number": 3.6}
    draft = write_extractive(plan, [e], idf, near=True)
    assert not draft.not_found and [c.evidence_id for c in draft.citations] == [1] and "[1]" in draft.text
    assert draft.note == NEAR_IN_MEANING  # the candidates' opening says why it is uncertain
    assert write_extractive(plan, [], idf, near=True).not_found  # nothing to answer from


def test_a_prefixed_question_word_is_met_by_its_plain_form() -> None:
    from sift.graph.writer.abstention import absent_terms
    from sift.graph.writer.terms import coverage

    section = ev(1, "docs/hashing.md", "Hash Code Caching", "Some objects have hash codes which are expensive to "
                 "compute. To enable caching of hash codes, pass cache_hash=True.", 0.06, kind="doc")
    plan = plan_question("Can the library remember an object's hash code so it is not recomputed on every lookup?",
                         "kb")
    tokens = ["hash", "code", "recomput"]
    idf = {"hash": 2.0, "code": 1.0, "recomput": 4.0, "\x00absent": 4.0}
    assert coverage(section, tokens, idf) == 1.0
    assert absent_terms(tokens, idf, [section]) == []
    assert plan.question_type in ("explain", "doc")


def test_named_things_are_capitalised_words_inside_a_sentence() -> None:
    from sift.retrievers.question import question_shape

    assert question_shape("How do I export my classes as Protocol Buffers messages?").named == ("Protocol", "Buffers")
    assert question_shape("How do I send the events to a Kafka topic?").named == ("Kafka",)
    assert question_shape("Where is `AuthService` defined? Tokens are checked there.").named == ()


def test_a_rare_named_thing_the_cited_evidence_never_mentions_is_not_found() -> None:
    toc = ev(1, "docs/index.md", "Full Table of Contents", "Initialization: map each class to its table of "
             "attributes. Database rows and integration tests.", 0.05, kind="doc")
    idf = {"map": 3.0, "class": 0.5, "databas": 6.0, "tabl": 5.0, "built": 2.0, "orm": 7.2, "integr": 5.0,
           "\x00absent": 8.5}
    plan = plan_question("How do I map a class to a database table with its built-in ORM integration?", "kb")
    draft = write_extractive(plan, [toc], idf)
    assert draft.not_found and draft.citations == []
    # The same question about a named thing the corpus mentions often is answered from the evidence.
    common = {**idf, "orm": 2.0}
    toc_orm = toc.model_copy(update={"text": toc.text + " Works with any ORM."})
    assert not write_extractive(plan, [toc_orm], common).not_found


def test_framing_words_do_not_count_against_coverage() -> None:
    from sift.graph.writer.terms import coverage, query_tokens

    dump = ev(1, "src/pkg/schema.py", "Schema.dump", 'def dump(self, obj):\n    """Serialize an object to native '
              'Python data types according to this Schema\'s fields."""\n    return self._serialize(obj)', 0.07)
    plan = plan_question("What happens inside `Schema.dump`, and how is each field serialized?", "kb")
    tokens = query_tokens(plan)
    assert "happen" not in tokens and "inside" not in tokens
    idf = {"happen": 4.9, "inside": 7.4, "schema": 0.5, "dump": 1.8, "field": 0.5, "serialize": 2.2}
    assert coverage(dump, tokens, idf) == 1.0
    assert select_evidence(plan, [dump], idf) == [dump]


def test_a_list_question_lists_the_module_named_after_what_it_asks_for() -> None:
    from sift.graph.writer.selection import list_anchor
    from sift.retrievers.question import list_subject

    assert list_subject("What kinds of validators does the library provide?") == ["validator"]
    assert list_subject("Which exception classes are defined in `attr.exceptions`?") == ["exception", "class"]
    example = ev(1, "examples/completion/completion.py", "select_user", "def select_user(ctx, user):\n"
                 '    """Shell completion for a user name."""', 0.09)
    validator = ev(2, "src/pkg/validate.py", "Range", 'class Range(Validator):\n    """Checks a range."""', 0.05)
    # "completion" is not what is being listed: the shells are.
    plan = plan_question("Which shells get tab completion for my command out of the box?", "kb")
    assert list_anchor(plan, [example, validator], {}) is None
    plan = plan_question("What validators does the library provide out of the box?", "kb")
    anchor = list_anchor(plan, [example, validator], {})
    assert anchor is not None and anchor.path == "src/pkg/validate.py"


def test_docstring_sentences_are_quoted_whole_not_as_wrapped_lines() -> None:
    doc = ("This is the way to invoke a script with all the bells and\n    whistles as a command line application."
           "  This will always terminate\n    the application after a call.\n\n    :param prog_name: the program name"
           " that should be used.\n    :param standalone_mode: the default behavior is to invoke the script\n"
           "        in standalone mode.  If this is set to `False` they will be\n        propagated to the caller"
           " and the return value of this\n        function is the return value of :meth:`invoke`.")
    main = ev(1, "src/pkg/core.py", "Command.main", "def main(self, args=None, standalone_mode=True):\n"
              f'    """{doc}"""\n    return self.invoke(args)', 0.07, start=1010)
    main = main.model_copy(update={"docstring": doc})
    plan = plan_question("What does passing `standalone_mode=False` to `main` change about the return value?", "kb")
    draft = write_extractive(plan, [main], {})
    # A later sentence of a field's description says which field it is about.
    assert "For `standalone_mode`, if this is set to False they will be propagated to the caller and the return value " \
           "of this function is the return value of invoke [1]." in draft.text
    assert ":param" not in draft.text  # a field list is said in words, never quoted
    assert "whistles as a command line application. This will always" not in draft.text  # no wrapped fragments
    assert check_draft(draft, [main], facts(main), 1).ok


def test_cited_evidence_missing_the_rare_question_words_is_not_an_answer() -> None:
    pipeline = ev(1, "docs/commands.rst", "Multi Command Pipelines", "Each subcommand can return a processor "
                  "function to modify the stream of lines. The library shuts down the context after each callback "
                  "has been run.", 0.06, kind="doc")
    passing = ev(2, "tests/test_loop.py", "test_for_loop", "def test_for_loop():\n    for event in events:\n"
                 "        pass", 0.03)
    idf = {"write": 2.6, "command": 0.6, "async": 8.3, "function": 2.4, "library": 4.9, "run": 2.9, "event": 6.4,
           "loop": 6.7, "coroutine": 8.3, "await": 8.0, "\x00absent": 8.3}
    plan = plan_question("Can I write a command as an async coroutine and have the library await it on an event "
                         "loop for me?", "kb")
    # The four rare words (ABSENT_TERMS) occur in the evidence only in passing (a test's for loop), not in what
    # would be cited.
    draft = write_extractive(plan, [pipeline, passing], idf)
    assert draft.not_found and draft.citations == []
    # Two of them missing are not enough: a newcomer's words are often not the project's, so the writer answers
    # from what it found, and says it is uncertain.
    plan = plan_question("Can I write a command as an async function and have the library run it on an event "
                         "loop for me?", "kb")
    draft = write_extractive(plan, [pipeline, passing], idf)
    assert not draft.not_found and draft.citations


def test_a_compound_word_written_apart_in_the_evidence_is_not_missing() -> None:
    # click 8.1.7's get_app_dir, with the idf click's corpus gives the question's words.
    text = (
        'def get_app_dir(app_name: str, roaming: bool = True, force_posix: bool = False) -> str:\n'
        '    r"""Returns the config folder for the application.  The default behavior\n'
        '    is to return whatever is most appropriate for the operating system.\n'
        '\n'
        '    To give you an idea, for an app called ``"Foo Bar"``, something like\n'
        '    the following folders could be returned:\n'
        '\n'
        '    Mac OS X:\n'
        '      ``~/Library/Application Support/Foo Bar``\n'
        '    Mac OS X (POSIX):\n'
        '      ``~/.foo-bar``\n'
        '    Unix:\n'
        '      ``~/.config/foo-bar``\n'
        '    Unix (POSIX):\n'
        '      ``~/.foo-bar``\n'
        '    Windows (roaming):\n'
        '      ``C:\\Users\\<user>\\AppData\\Roaming\\Foo Bar``\n'
        '    Windows (not roaming):\n'
        '      ``C:\\Users\\<user>\\AppData\\Local\\Foo Bar``\n'
        '\n'
        '    .. versionadded:: 2.0\n'
        '\n'
        '    :param app_name: the application name.  This should be properly capitalized\n'
        '                     and can contain whitespace.\n'
        '    :param roaming: controls if the folder should be roaming or not on Windows.\n'
        '                    Has no effect otherwise.\n'
        '    :param force_posix: if this is set to `True` then on any POSIX system the\n'
        '                        folder will be stored in the home folder with a leading\n'
        "                        dot instead of the XDG config home or darwin's\n"
        '                        application support folder.\n'
        '    """\n'
        '    if WIN:\n'
        '        key = "APPDATA" if roaming else "LOCALAPPDATA"\n'
        '        folder = os.environ.get(key)\n'
        '        if folder is None:\n'
        '            folder = os.path.expanduser("~")\n'
        '        return os.path.join(folder, app_name)\n'
        '    if force_posix:\n'
        '        return os.path.join(os.path.expanduser(f"~/.{_posixify(app_name)}"))\n'
        '    if sys.platform == "darwin":\n'
        '        return os.path.join(\n'
        '            os.path.expanduser("~/Library/Application Support"), app_name\n'
        '        )\n'
        '    return os.path.join(\n'
        '        os.environ.get("XDG_CONFIG_HOME", os.path.expanduser("~/.config")),\n'
        '        _posixify(app_name),\n'
        '    )'
    )
    app_dir = ev(1, "src/pkg/utils.py", "get_app_dir", text, 0.06, start=446)
    idf = {"tool": 3.6, "keep": 4.6, "per": 5.4, "user": 3.1, "configuration": 5.0, "file": 2.0, "land": 8.3,
           "right": 5.1, "folder": 4.4, "window": 2.9, "macos": 8.3, "mac": 6.7, "os": 2.7, "linux": 5.2,
           "\x00absent": 8.3}
    plan = plan_question("Where should my tool keep its per-user configuration file so that it lands in the right "
                         "folder on Windows, macOS and Linux?", "kb")
    draft = write_extractive(plan, [app_dir], idf)
    assert not draft.not_found and draft.citations[0].path == "src/pkg/utils.py"


def test_a_documentation_answer_links_the_definition_of_the_api_it_names() -> None:
    section = ev(1, "docs/types.md", "Type Annotations", "# Type Annotations\n\nTypes may be defined as string "
                 "literals, so-called *forward references*.\nIn this case *attrs* simply puts these string literals "
                 "into the type attributes.\nIf you need to resolve these to real types, you can call "
                 "{func}`attrs.resolve_types` which will update the attribute in place.", 0.175, kind="doc", start=41)
    definition = ev(2, "src/pkg/_funcs.py", "resolve_types", 'def resolve_types(cls, globalns=None, localns=None):\n'
                    '    """Resolve any strings and forward annotations in type annotations."""\n'
                    "    hints = typing.get_type_hints(cls, globalns=globalns, localns=localns)\n    return cls",
                    0.170, start=397).model_copy(update={"docstring": "Resolve any strings and forward annotations "
                                                                 "in type annotations."})
    test = ev(3, "tests/test_funcs.py", "resolve_types", "def resolve_types():\n    pass", 0.171, start=5)
    plan = plan_question("My type annotations are strings or forward references; how do I get the real types onto "
                         "the fields at runtime?", "kb")
    draft = write_extractive(plan, [section, test, definition], {})
    assert [c.path for c in draft.citations] == ["docs/types.md", "src/pkg/_funcs.py"]
    assert "The code does it in `resolve_types` (src/pkg/_funcs.py, lines 397-400), which resolves any strings" \
           in draft.text
    assert check_draft(draft, [section, test, definition], facts(section, definition), k=1).ok
    # A code answer, or a documentation answer naming nothing defined in the evidence, cites only itself.
    plain_section = section.model_copy(update={"text": "# Type Annotations\n\nTypes may be string literals."})
    assert len(write_extractive(plan, [plain_section, definition.model_copy(update={"score": 0.01})], {}).citations) == 1


def test_code_examples_in_a_section_are_shown_as_code_blocks() -> None:
    md = ev(1, "docs/examples.md", "Immutability", "## Immutability\n\nSometimes instances should not change after "
            "creation.\nA class can be made frozen:\n\n```{doctest}\n>>> @frozen\n... class C:\n...     x: int\n"
            ">>> C(1).x = 2\nTraceback (most recent call last):\nFrozenInstanceError: can't set attribute\n```\n\n"
            "Frozen classes are good for configuration.", 0.2, kind="doc", start=633)
    plan = plan_question("How do I make instances of a class immutable so assigning an attribute fails?", "kb")
    draft = write_extractive(plan, [md], {})
    assert "```python\n>>> @frozen\n... class C:\n...     x: int\n>>> C(1).x = 2\n" in draft.text
    assert "FrozenInstanceError: can't set attribute\n```" in draft.text
    # Prose around the block is still quoted sentence by sentence, each with its marker.
    assert "Sometimes instances should not change after creation." in draft.text
    assert check_draft(draft, [md], facts(md), k=1).ok

    rst = ev(2, "docs/utils.rst", "Showing Progress Bars", "Showing Progress Bars\n---------------------\n\n"
             "To show a progress bar while processing users, change the code to this::\n\n    with "
             "click.progressbar(users) as bar:\n        for user in bar:\n            modify(user)\n\n"
             "The progress bar computes the remaining time.\n\n.. code-block:: python\n    :caption: eta.py\n\n"
             "    bar = click.progressbar(users, length=n)\n    values[0] = bar\n", 0.2, kind="doc", start=350)
    plan = plan_question("How do I show a progress bar with the remaining time while processing users?", "kb")
    draft = write_extractive(plan, [rst], {})
    assert "change the code to this [2]:\n```python\nwith click.progressbar(users) as bar:\n    for user in bar:\n" \
           "        modify(user)\n```\nThe progress bar computes the remaining time [2]." in draft.text
    assert "Showing Progress Bars [2]" not in draft.text  # the section's own title is not quoted as a sentence
    assert "values[0]" not in draft.text  # "[0]" would read as a citation of evidence 0
    assert check_draft(draft, [rst], facts(rst), k=1).ok


def test_a_chunk_that_starts_inside_a_code_block_shows_it_as_code_not_indented_prose() -> None:
    rest = ev(1, "docs/testing.rst", "Basic Testing", "   def test_hello():\n     runner = CliRunner()\n"
              "     result = runner.invoke(hello, ['Peter'])\n     assert result.exit_code == 0\n\n"
              "For subcommands, pass the subcommand name in the args of CliRunner.invoke.", 0.2, kind="doc", start=41)
    plan = plan_question("How do I test a command with CliRunner and check its exit code?", "kb")
    text = write_extractive(plan, [rest], {}).text
    assert "```python\ndef test_hello():\n  runner = CliRunner()\n" in text
    item = ev(2, "docs/hashing.md", "Hashing", "  While this is not required for correctness, sets and dicts get "
              "slow when many objects share one hash.\n\nThe hash of an object must not change while it is in a "
              "set.", 0.2, kind="doc", start=52)
    text = write_extractive(plan_question("Why must the hash of an object in a set not change?", "kb"), [item], {}).text
    assert "```" not in text and "sets and dicts get slow when many objects share one hash." in text and text.endswith("in a set [2].")


def test_callers_in_the_code_come_before_tests_that_call_it() -> None:
    body = 'def get_app_dir(app_name):\n    """Returns the config folder for the application."""\n    return app_name'
    both = ev(1, "src/pkg/utils.py", "get_app_dir", body, 0.2, start=446).model_copy(update={"callers": [
        {"path": "src/pkg/config.py", "line": 12, "caller": "load_config"},
        {"path": "tests/test_utils.py", "line": 30, "caller": "test_app_dir"}]})
    plan = plan_question("Where is the per-user config folder of the application computed?", "kb")
    text = write_extractive(plan, [both], {}).text
    assert "It is called from src/pkg/config.py:12 (in load_config) [1]." in text and "tests/" not in text
    only_tests = both.model_copy(update={"callers": both.callers[1:]})
    text = write_extractive(plan, [only_tests], {}).text
    assert "Tests call it at tests/test_utils.py:30 (in test_app_dir) [1]." in text


def test_an_api_named_in_a_code_example_is_linked_to_its_definition() -> None:
    section = ev(1, "docs/options.rst", "Choice Options", "Choice Options\n--------------\n\nSometimes an option "
                 "takes one of a list of values.\n\n.. click:example::\n\n    @click.option('--hash-type', "
                 "type=click.Choice(['MD5', 'SHA1'], case_sensitive=False))\n    def digest(hash_type):\n"
                 "        click.echo(hash_type)\n", 0.2, kind="doc", start=370)
    choice = ev(2, "src/pkg/types.py", "Choice", 'class Choice(ParamType):\n    """The choice type checks a value '
                'against a fixed set of values."""\n    name = "choice"', 0.1, start=226).model_copy(
        update={"docstring": "The choice type checks a value against a fixed set of values."})
    plan = plan_question("How do I restrict an option to a fixed list of allowed values?", "kb")
    draft = write_extractive(plan, [section, choice], {})
    assert "```python\n@click.option('--hash-type'" in draft.text
    assert "The code does it in `Choice` (src/pkg/types.py, lines 226-228): The choice type checks" in draft.text
    assert check_draft(draft, [section, choice], facts(section, choice), k=1).ok


def test_a_heading_underlined_with_tildes_is_not_a_code_fence() -> None:
    section = ev(1, "docs/documentation.rst", "Help Texts", "Help Texts\n~~~~~~~~~~\n\nCommands and options accept "
                 "help arguments.\nThe help text of a command is its docstring.\n\nTruncating Help Texts\n"
                 "~~~~~~~~~~~~~~~~~~~~~\n\nClick shortens the help text of a command in the listing.", 0.2, kind="doc")
    text = write_extractive(plan_question("Where does the help text of a command come from?", "kb"), [section], {}).text
    assert "```" not in text and "The help text of a command is its docstring." in text


def test_the_writer_cites_what_the_ranker_puts_first() -> None:
    # Both items share the question's words; the fused ranker's order decides, not a second scorer in the writer.
    ranked_first = ev(1, "pkg/auth.py", "check_token", "def check_token(token):\n    \"\"\"Validate a token.\"\"\"", 0.09)
    more_words = ev(2, "pkg/tokens.py", "validate_token", "def validate_token(token):\n    \"\"\"Validate the token "
                    "and return it.\"\"\"", 0.03)
    plan = plan_question("Where is the token validated?", "kb")
    assert [e.path for e in select_evidence(plan, [more_words, ranked_first], {})] == ["pkg/auth.py"]
    assert [e.id for _, e in rank_evidence(plan, [more_words, ranked_first], {})] == [1, 2]
