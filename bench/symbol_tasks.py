"""The scripted task set of the "symbol tools" figures: a small `shop` package, four tasks, and for each the calls a
model makes with the symbol tools and with edit_file only. Each call is made from what the previous results said
(the token read, the lines found, a refusal), as a model would; both paths must leave the same text (`after`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Generator

PRICING = '''"""Prices, taxes and the cart of the shop, in dollars."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Optional


@dataclass(frozen=True)
class Item:
    name: str
    price: Optional[Decimal]
    weight: float = 0.0


def round_cents(value):
    """`value` rounded to whole cents, halves up."""
    return Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


# the 2019 summer promotion; checkout stopped offering it
def legacy_discount(price):
    return round_cents(price * Decimal("0.9"))


def apply_tax(amount, rate):
    """The amount with tax at `rate` (0.2 for 20 %), rounded to cents."""
    if rate < 0:
        raise ValueError(f"negative: {rate}")
    return round_cents(amount * (1 + Decimal(rate)))


def parse_price(text: str) -> int:
    """A price written as "$12.50", in cents."""
    return int(Decimal(text.strip().lstrip("$")) * 100)


def format_price(value) -> str:
    return f"${round_cents(value):,}"


class Cart:
    """Items with a price each; an item whose price is not known yet has None."""

    def __init__(self, items=()):
        self.items = list(items)

    @property
    def count(self):
        return len(self.items)

    @property
    def total(self):
        """The sum of the items' prices."""
        total = Decimal(0)
        for item in self.items:
            total = total + item.price
        return total

    @staticmethod
    def empty():
        return Cart()

    @functools.cached_property
    def heaviest(self):
        return max(self.items, key=lambda item: item.weight, default=None)

    def add(self, item):
        self.items.append(item)
        self.__dict__.pop("heaviest", None)
'''

CHECKOUT = '''"""The checkout: a cart, a region, a payment."""

from shop.pricing import Cart, apply_tax, format_price, parse_price


def checkout(cart: Cart, region, form) -> str:
    subtotal = cart.total
    due = apply_tax(subtotal, rate=region.rate)
    paid = parse_price(form["paid"]) / 100
    if paid < due:
        return f"{format_price(due - paid)} still to pay"
    return f"paid, change {format_price(paid - due)}"
'''

INVOICE = '''"""Invoices: one line per item kind, each taxed at its own rate."""

from shop.pricing import apply_tax, format_price

RATES = {"food": 0.05, "books": 0.0, "other": 0.2}


def invoice_total(lines) -> str:
    total = 0
    for line in lines:
        total += apply_tax(line.amount, rate=RATES[line.kind])
    return format_price(total)
'''

REPORT = '''"""The daily report."""

from shop.pricing import apply_tax


def gross(amount):
    return apply_tax(amount, 0.2)
'''

FILES = {"shop/__init__.py": "", "shop/pricing.py": PRICING, "shop/checkout.py": CHECKOUT,
         "shop/invoice.py": INVOICE, "shop/report.py": REPORT}
P = "shop/pricing.py"

Calls = list[tuple[str, dict]]
Player = Generator[Calls, list[str], None]
"""Yields the tool calls of one reply, is sent the tools' results; returns when the model would say it is done."""


@dataclass(frozen=True)
class Task:
    name: str
    message: str
    symbols: Callable[[], Player]
    edit_only: Callable[[], Player]
    after: dict[str, str]
    """The files the task changes, as they must read after it (either path)."""


# ---- what a model reads off a result -------------------------------------------------------------------------


def token(read: str) -> str:
    return re.search(r"token=(\w+)", read).group(1)


def code(numbered: str) -> str:
    """The text of the numbered lines (`  12\\ttext`) of a read_file or read_symbol answer."""
    return "\n".join(line.split("\t", 1)[1] for line in numbered.splitlines() if re.match(r" *\d+\t", line))


def numbered_line(numbered: str, needle: str) -> tuple[int, int]:
    """(line, column), 1-based, of `needle` in a numbered answer."""
    for line in numbered.splitlines():
        m = re.match(r" *(\d+)\t(.*)", line)
        if m and needle in m.group(2):
            return int(m.group(1)), m.group(2).index(needle) + 1
    raise LookupError(needle)


def block(text: str, first: str, last: str) -> str:
    """The lines of `text` from the one starting with `first` through the first one after it containing `last`."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next(i for i in range(start, len(lines)) if last in lines[i])
    return "\n".join(lines[start:end + 1])


def hits(found: str) -> list[tuple[str, str]]:
    """(path, the line's text) of each `path:line[:col]: text` line of a search or find_references answer."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^(\S+?\.py):\d+(?::\d+)?: (.*)$", found, re.M)]


# ---- 1. rename a parameter and update its callers -------------------------------------------------------------

RENAMED = {path: text.replace("rate=", "tax_rate=") for path, text in (("shop/checkout.py", CHECKOUT),
                                                                     ("shop/invoice.py", INVOICE))}
RENAMED[P] = PRICING.replace(block(PRICING, "def apply_tax", "return"),
                             re.sub(r"\brate\b", "tax_rate", block(PRICING, "def apply_tax", "return")))


def callers_renamed(found: str) -> Calls:
    return [("edit_file", {"path": path, "old_string": line.strip(),
                           "new_string": line.strip().replace("rate=", "tax_rate=")})
            for path, line in hits(found) if "rate=" in line]


def rename_symbols() -> Player:
    (read,) = yield [("read_symbol", {"path": P, "symbol": "apply_tax"})]
    body = re.sub(r"\brate\b", "tax_rate", code(read))
    yield [("replace_symbol", {"path": P, "symbol": "apply_tax", "token": token(read), "body": body})]
    line, column = numbered_line(read, "apply_tax")
    (found,) = yield [("find_references", {"path": P, "line": line, "column": column})]
    yield callers_renamed(found)


def rename_edit_only() -> Player:
    (read,) = yield [("read_file", {"path": P})]
    old = block(code(read), "def apply_tax", "return")
    yield [("edit_file", {"path": P, "old_string": old, "new_string": re.sub(r"\brate\b", "tax_rate", old)})]
    (found,) = yield [("search", {"pattern": r"\bapply_tax\("})]
    yield callers_renamed(found)


# ---- 2. replace a method's body in a class with decorated methods --------------------------------------------

TOTAL = '''    @property
    def total(self):
        """The sum of the prices known so far (items without a price left out)."""
        return sum((item.price for item in self.items if item.price is not None), Decimal(0))'''
TOTAL_AFTER = {P: PRICING.replace(block(PRICING, "    def total", "return total"), TOTAL.split("\n", 1)[1])}


def total_symbols() -> Player:
    (read,) = yield [("read_symbol", {"path": P, "symbol": "Cart/total"})]
    yield [("replace_symbol", {"path": P, "symbol": "Cart/total", "token": token(read), "body": TOTAL})]


def total_edit_only() -> Player:
    (read,) = yield [("read_file", {"path": P})]
    old = block(code(read), "    def total", "return total")
    yield [("edit_file", {"path": P, "old_string": old, "new_string": TOTAL.split("\n", 1)[1]})]


# ---- 3. delete a dead helper ---------------------------------------------------------------------------------

DEAD = "# the 2019 summer promotion; checkout stopped offering it\n" + block(PRICING, "def legacy_discount", "return")
DEAD_AFTER = {P: PRICING.replace(DEAD + "\n\n\n", "")}


def dead_symbols() -> Player:
    (read,) = yield [("read_symbol", {"path": P, "symbol": "legacy_discount"})]
    delete = {"path": P, "symbol": "legacy_discount", "token": token(read)}
    (answer,) = yield [("delete_symbol", delete)]
    if answer.startswith("Deleted"):
        return
    pattern = re.search(r"pattern `([^`]+)`", answer).group(1)  # refused as not proved unused: look, then force
    (found,) = yield [("search", {"pattern": pattern})]
    if all("def legacy_discount" in line for _, line in hits(found)):
        yield [("delete_symbol", {**delete, "force": True})]


def dead_edit_only() -> Player:
    (found,) = yield [("search", {"pattern": r"\blegacy_discount\b"})]
    if not all("def legacy_discount" in line for _, line in hits(found)):
        return
    (read,) = yield [("read_file", {"path": P})]
    old = block(code(read), "# the 2019", "return") + "\n\n\n"
    yield [("edit_file", {"path": P, "old_string": old, "new_string": ""})]


# ---- 4. change a return type ---------------------------------------------------------------------------------

PARSE = '''def parse_price(text: str) -> Decimal:
    """A price written as "$12.50", in dollars."""
    return Decimal(text.strip().lstrip("$"))'''
PAID = '    paid = parse_price(form["paid"]) / 100'
PARSE_AFTER = {P: PRICING.replace(block(PRICING, "def parse_price", "return"), PARSE),
               "shop/checkout.py": CHECKOUT.replace(PAID, PAID.removesuffix(" / 100"))}


def caller_fixed(path: str, line: str) -> Calls:
    return [("edit_file", {"path": path, "old_string": line.strip(),
                           "new_string": line.strip().removesuffix(" / 100")})]


def parse_symbols() -> Player:
    (read,) = yield [("read_symbol", {"path": P, "symbol": "parse_price"})]
    yield [("replace_symbol", {"path": P, "symbol": "parse_price", "token": token(read), "body": PARSE})]
    (impact,) = yield [("impact", {})]
    callers = re.findall(r"^  (\S+?\.py)(?::\d+:\d+)?: (\S+?)(?: \(\d+\))?$", impact, re.M)
    for path, caller in callers:
        (read,) = yield [("read_symbol", {"path": path, "symbol": caller})]
        for line in code(read).split("\n"):  # a caller may not divide (or not be a caller at all): nothing to fix
            if "parse_price(" in line and "/ 100" in line:
                yield caller_fixed(path, line)


def parse_edit_only() -> Player:
    (read,) = yield [("read_file", {"path": P})]
    old = block(code(read), "def parse_price", "return")
    yield [("edit_file", {"path": P, "old_string": old, "new_string": PARSE})]
    (found,) = yield [("search", {"pattern": r"\bparse_price\("})]
    for path, line in hits(found):
        if "/ 100" in line:
            yield caller_fixed(path, line)


TASKS = [
    Task("rename a parameter and update its callers",
         "Rename the parameter `rate` of apply_tax in shop/pricing.py to `tax_rate`, and update its callers.",
         rename_symbols, rename_edit_only, RENAMED),
    Task("replace a method in a class with decorated methods",
         "Make Cart.total in shop/pricing.py leave out the items whose price is None.",
         total_symbols, total_edit_only, TOTAL_AFTER),
    Task("delete a dead helper", "Delete legacy_discount from shop/pricing.py if nothing uses it.",
         dead_symbols, dead_edit_only, DEAD_AFTER),
    Task("change a return type",
         "Make parse_price in shop/pricing.py return a Decimal of dollars instead of int cents, and fix its callers.",
         parse_symbols, parse_edit_only, PARSE_AFTER),
]
