"""A tiny inventory module: the demo workspace agent-lsp opens."""


def total_value(items):
    """Sum of price times quantity."""
    return sum(item["price"] * item["quantity"] for item in items)


def restock(items, name, amount):
    # TODO: refuse negative amounts
    for item in items:
        if item["name"] == name:
            item["quantity"] += amount
    return items
