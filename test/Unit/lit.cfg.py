# -*- Python -*-
# GoogleTest binaries run under lit: every TEST is one lit test.
import lit.formats

config.name = "LOOM-Unit"
config.suffixes = []
config.test_source_root = config.loom_unittest_dir
config.test_exec_root = config.loom_unittest_dir
config.test_format = lit.formats.GoogleTest(".", "Tests")
