// A rule set without rules, for tests of what tg-superopt does around the
// search (test/Dialect/TG/superopt-stored-weights.mlir).

module {
}
