//===- loom-check-paths.cpp - Every path the docs and sources name exists -===//
//
// Part of Loom. A stand-alone C++17 program, with no LLVM or MLIR dependency,
// that reads the repository's Markdown and source files and reports, with
// file and line, every reference to a file that does not exist:
//
//   loom-check-paths [--exclude=PATH]... [--index=PAGE]... ROOT
//
//  * in Markdown (`*.md`): every relative link `[text](target)` or
//    reference definition `[id]: target`, resolved against the directory of
//    the file that holds it; an anchor (`target#heading`) must name a heading
//    of the target file (GitHub's heading ids);
//  * in source files and in Markdown code (spans and fenced blocks): every
//    repository path, i.e. a token that starts with a top-level directory
//    (`lib/`, `include/`, `docs/`, ...), resolved against ROOT;
//  * with --index=PAGE: every Markdown page under PAGE's directory is linked
//    from PAGE (docs/README.md lists every doc).
//
// The rules that tell a path from prose are in docs/Testing.md ("Paths in docs
// and comments"); test/docs-links.test runs this on the repository and on
// planted bad references. It exits 1 when a reference is broken.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fs = std::filesystem;

namespace {

/// The top-level directories whose paths are checked: a token is a path when
/// it starts with one of these followed by `/`.
constexpr const char *kTopDirs[] = {
    "bench",   "docs", "include", "lib",  "python-free-examples",
    "scripts", "test", "tools",   "utils"};

/// Files read for repository paths, by extension (Markdown is read apart).
constexpr const char *kSourceExtensions[] = {
    ".c",    ".cpp", ".h",  ".td", ".def", ".inc",   ".mlir",
    ".test", ".txt", ".sh", ".py", ".in",  ".cmake", ".json"};

/// A character that continues a path token.
bool isPathChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-' || c == '/';
}

/// A path starts after a character that cannot be part of a longer path or
/// of a variable: `%loom_src_root/docs/x` and `mlir/lib/x` are not ours.
bool isBoundaryBefore(std::string_view text, size_t i) {
  if (i == 0)
    return true;
  char c = text[i - 1];
  return !isPathChar(c) && !std::strchr("%$@~\\", c);
}

/// After a path, these mark a glob or a placeholder: `test/*.mlir`,
/// `lib/Conversion/<X>To<Y>/`, `include/{IR,Transforms}`, `${DIR}`.
bool isPlaceholderAfter(char c) { return c && std::strchr("*<{$%[", c); }

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// Returns the length of the top-level directory prefix (`lib/`) at the start
/// of \p s, or 0.
size_t topDirPrefix(std::string_view s) {
  for (const char *dir : kTopDirs) {
    size_t n = std::strlen(dir);
    if (s.size() > n && s.substr(0, n) == dir && s[n] == '/')
      return n + 1;
  }
  return 0;
}

struct Problem {
  std::string file;
  unsigned line;
  std::string message;
  std::string hint;
};

//===----------------------------------------------------------------------===//
// The repository: existence, moved-file hints, headings
//===----------------------------------------------------------------------===//

class Repo {
public:
  explicit Repo(fs::path root) : root(std::move(root)) {}

  const fs::path &getRoot() const { return root; }

  /// Relative path of \p p under the root, or "" when \p p is outside it.
  std::string relative(const fs::path &p) const {
    fs::path rel = p.lexically_normal().lexically_relative(root);
    std::string s = rel.generic_string();
    if (s.empty() || startsWith(s, ".."))
      return "";
    return s == "." ? "" : s;
  }

  bool exists(const std::string &rel) const {
    std::error_code ec;
    return fs::exists(root / rel, ec);
  }

  /// Indexes \p rel and its directories by name, for movedHint.
  void addFile(const std::string &rel) {
    byName[fs::path(rel).filename().string()].push_back(rel);
    for (fs::path dir = fs::path(rel).parent_path(); !dir.empty();
         dir = dir.parent_path()) {
      if (!indexedDirs.insert(dir.generic_string()).second)
        break;
      byName[dir.filename().string()].push_back(dir.generic_string());
    }
  }

  /// "did you mean X?" when a file of the same name exists elsewhere: the
  /// usual reason for a broken reference is a move.
  std::string movedHint(std::string rel) const {
    while (endsWith(rel, "/"))
      rel.pop_back();
    std::string name = fs::path(rel).filename().string();
    auto it = byName.find(name);
    if (name.empty() || it == byName.end())
      return "";
    std::string hint = "did you mean ";
    for (size_t i = 0; i < it->second.size() && i < 3; ++i)
      hint += (i ? " or " : "") + it->second[i];
    return hint + "?";
  }

  /// The heading ids of the Markdown file \p rel (cached).
  const std::set<std::string> &anchorsOf(const std::string &rel);

private:
  fs::path root;
  std::map<std::string, std::vector<std::string>> byName;
  std::set<std::string> indexedDirs;
  std::map<std::string, std::set<std::string>> anchors;
};

/// GitHub's id for a heading: lower case; letters, digits, `-` and `_` kept;
/// spaces become `-`; other ASCII punctuation (backticks, parentheses, dots)
/// dropped. A repeated heading gets `-1`, `-2`, ... appended.
std::string headingId(std::string_view heading) {
  std::string id;
  for (char c : heading) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_')
      id += static_cast<char>(std::tolower(u));
    else if (c == ' ')
      id += '-';
    else if (u >= 0x80)
      id += c;
  }
  return id;
}

/// A fenced code block opens or closes on a line whose first non-blank
/// characters are ``` or ~~~.
bool isFence(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  return i != std::string_view::npos &&
         (line.substr(i, 3) == "```" || line.substr(i, 3) == "~~~");
}

const std::set<std::string> &Repo::anchorsOf(const std::string &rel) {
  auto [it, inserted] = anchors.try_emplace(rel);
  if (!inserted)
    return it->second;
  std::ifstream in(root / rel);
  std::map<std::string, int> seen;
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (isFence(line)) {
      fenced = !fenced;
      continue;
    }
    size_t hashes = line.find_first_not_of('#');
    if (fenced || hashes == 0 || hashes > 6 || hashes == std::string::npos ||
        line[hashes] != ' ')
      continue;
    std::string_view text(line);
    text.remove_prefix(hashes + 1);
    while (!text.empty() && (text.back() == '#' || text.back() == ' '))
      text.remove_suffix(1);
    std::string id = headingId(text);
    int n = seen[id]++;
    it->second.insert(n ? id + "-" + std::to_string(n) : id);
  }
  return it->second;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

class Checker {
public:
  explicit Checker(Repo &repo) : repo(repo) {}

  void checkSourceFile(const std::string &rel);
  void checkMarkdownFile(const std::string &rel);
  /// Every Markdown page under the directory of \p index (checked before)
  /// is the target of one of its links.
  void checkIndex(const std::string &index,
                  const std::vector<std::string> &files);

  const std::vector<Problem> &getProblems() const { return problems; }
  unsigned getNumLinks() const { return numLinks; }
  unsigned getNumPaths() const { return numPaths; }

private:
  Repo &repo;
  std::vector<Problem> problems;
  unsigned numLinks = 0;
  unsigned numPaths = 0;
  /// The existing files each Markdown file links to.
  std::map<std::string, std::set<std::string>> linkedFrom;
  // The file being read and its line.
  std::string file;
  unsigned line = 0;

  void report(std::string message, std::string hint) {
    problems.push_back({file, line, std::move(message), std::move(hint)});
  }
  void checkPaths(std::string_view text);
  void checkPath(std::string_view path);
  void checkMarkdownLine(std::string_view text);
  void checkLink(std::string_view target);
  void checkAnchor(const std::string &rel, std::string_view target,
                   std::string_view anchor);
};

/// Every repository path in \p text (root-relative).
void Checker::checkPaths(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!isBoundaryBefore(text, i))
      continue;
    size_t start = i;
    if (text.substr(i, 2) == "./")
      start += 2;
    if (!topDirPrefix(text.substr(start)))
      continue;
    size_t end = start;
    while (end < text.size() && isPathChar(text[end]))
      ++end;
    std::string_view path = text.substr(start, end - start);
    i = end;
    if ((end < text.size() && isPlaceholderAfter(text[end])) ||
        path.find("...") != std::string_view::npos)
      continue;
    // A sentence may end right after a path.
    while (endsWith(path, "."))
      path.remove_suffix(1);
    checkPath(path);
  }
}

void Checker::checkPath(std::string_view path) {
  ++numPaths;
  std::string rel(path);
  if (repo.exists(rel))
    return;
  report("path '" + rel + "' does not exist", repo.movedHint(rel));
}

void Checker::checkSourceFile(const std::string &rel) {
  file = rel;
  line = 0;
  std::ifstream in(repo.getRoot() / rel);
  for (std::string text; std::getline(in, text);) {
    ++line;
    checkPaths(text);
  }
}

void Checker::checkMarkdownFile(const std::string &rel) {
  file = rel;
  line = 0;
  std::ifstream in(repo.getRoot() / rel);
  bool fenced = false;
  for (std::string text; std::getline(in, text);) {
    ++line;
    if (isFence(text)) {
      fenced = !fenced;
      continue;
    }
    if (fenced)
      checkPaths(text);
    else
      checkMarkdownLine(text);
  }
}

/// The end of the link destination that starts at \p i (just after `(`):
/// balanced parentheses, up to the first space (a title may follow).
size_t linkTargetEnd(std::string_view text, size_t i) {
  int depth = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || (c == ')' && depth == 0))
      return i;
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
  }
  return i;
}

/// One line of Markdown prose: code spans are read for repository paths,
/// links and reference definitions are resolved.
void Checker::checkMarkdownLine(std::string_view text) {
  size_t refStart = text.find_first_not_of(' ');
  if (refStart != std::string_view::npos && text[refStart] == '[') {
    size_t close = text.find("]:", refStart);
    if (close != std::string_view::npos &&
        text.substr(refStart, close - refStart).find('`') ==
            std::string_view::npos) {
      std::string_view rest = text.substr(close + 2);
      size_t b = rest.find_first_not_of(' ');
      if (b != std::string_view::npos)
        checkLink(rest.substr(b, linkTargetEnd(rest, b) - b));
      return;
    }
  }
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '`') {
      size_t after = text.find_first_not_of('`', i);
      size_t ticks =
          (after == std::string_view::npos ? text.size() : after) - i;
      std::string fence(ticks, '`');
      size_t close = text.find(fence, i + ticks);
      if (close == std::string_view::npos) {
        i += ticks - 1;
        continue;
      }
      checkPaths(text.substr(i + ticks, close - i - ticks));
      i = close + ticks - 1;
      continue;
    }
    if (text.substr(i, 2) == "](") {
      size_t end = linkTargetEnd(text, i + 2);
      checkLink(text.substr(i + 2, end - i - 2));
      i = end;
    }
  }
}

/// A link destination: URLs (a scheme) are not checked; the rest is a path
/// relative to the Markdown file, with an optional `#anchor`.
void Checker::checkLink(std::string_view target) {
  if (target.size() >= 2 && target.front() == '<' && target.back() == '>')
    target = target.substr(1, target.size() - 2);
  size_t colon = target.find(':');
  size_t slash = target.find_first_of("/#");
  if (target.empty() || (colon != std::string_view::npos && colon < slash))
    return;
  ++numLinks;
  size_t hash = target.find('#');
  std::string_view pathPart = target.substr(0, hash);
  std::string_view anchor = hash == std::string_view::npos
                                ? std::string_view()
                                : target.substr(hash + 1);
  fs::path base = pathPart.empty() ? fs::path(file)
                  : pathPart.front() == '/'
                      ? fs::path(std::string(pathPart.substr(1)))
                      : fs::path(file).parent_path() / std::string(pathPart);
  std::string rel = repo.relative(repo.getRoot() / base);
  if (rel.empty() && !pathPart.empty() && pathPart != "/") {
    report("link '" + std::string(target) +
               "' leaves the repository (a link must name a file in it)",
           "");
    return;
  }
  if (!rel.empty() && !repo.exists(rel)) {
    report("link '" + std::string(target) + "': " + rel + " does not exist",
           repo.movedHint(rel));
    return;
  }
  linkedFrom[file].insert(rel);
  if (!anchor.empty() && endsWith(rel, ".md"))
    checkAnchor(rel, target, anchor);
}

void Checker::checkAnchor(const std::string &rel, std::string_view target,
                          std::string_view anchor) {
  const std::set<std::string> &ids = repo.anchorsOf(rel);
  if (ids.count(std::string(anchor)))
    return;
  report("link '" + std::string(target) + "': " + rel +
             " has no heading with the id '" + std::string(anchor) + "'",
         "ids are GitHub's: the heading in lower case, spaces as '-', "
         "punctuation dropped");
}

void Checker::checkIndex(const std::string &index,
                         const std::vector<std::string> &files) {
  std::string dir = fs::path(index).parent_path().generic_string();
  const std::set<std::string> &linked = linkedFrom[index];
  for (const std::string &rel : files) {
    if (rel == index || !endsWith(rel, ".md") ||
        (!dir.empty() && !startsWith(rel, dir + "/")) || linked.count(rel))
      continue;
    file = rel;
    line = 1;
    report("page not listed in the index " + index,
           "add a line to " + index + " that links to it and says what it is");
  }
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

bool isSourceFile(const std::string &rel) {
  std::string name = fs::path(rel).filename().string();
  if (name == "CMakeLists.txt")
    return true;
  return std::any_of(std::begin(kSourceExtensions), std::end(kSourceExtensions),
                     [&](const char *ext) { return endsWith(rel, ext); });
}

/// Every regular file under the top-level directories (and the Markdown and
/// CMake files at the root), sorted; hidden directories and \p excluded paths
/// are left out.
std::vector<std::string> listFiles(Repo &repo,
                                   const std::set<std::string> &excluded) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const fs::directory_entry &e :
       fs::directory_iterator(repo.getRoot(), ec)) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file(ec) &&
        (endsWith(name, ".md") || name == "CMakeLists.txt"))
      files.push_back(name);
  }
  for (const char *dir : kTopDirs) {
    fs::recursive_directory_iterator it(repo.getRoot() / dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::string rel = repo.relative(it->path());
      bool hidden = it->path().filename().string().front() == '.';
      if (hidden || excluded.count(rel)) {
        if (it->is_directory(ec))
          it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec))
        files.push_back(rel);
    }
    ec.clear();
  }
  std::sort(files.begin(), files.end());
  return files;
}

void printProblems(const std::vector<Problem> &problems) {
  std::set<std::string> files;
  for (const Problem &p : problems) {
    std::fprintf(stderr, "%s:%u: error: %s\n", p.file.c_str(), p.line,
                 p.message.c_str());
    if (!p.hint.empty())
      std::fprintf(stderr, "  note: %s\n", p.hint.c_str());
    files.insert(p.file);
  }
  std::fprintf(
      stderr,
      "loom-check-paths: %zu broken reference%s in %zu file%s.\n"
      "  To fix: a file that moved -> point each reference above at its new "
      "path; a file that is gone -> reword or drop the reference; a heading "
      "that was renamed -> update the #anchor.\n"
      "  A Markdown link is relative to the file that holds it; a path in a "
      "source file or in Markdown code (`...`) is relative to the repository "
      "root.\n"
      "  The rules (what counts as a path, how to write a placeholder): "
      "docs/Testing.md, \"Paths in docs and comments\".\n",
      problems.size(), problems.size() == 1 ? "" : "s", files.size(),
      files.size() == 1 ? "" : "s");
}

int usage() {
  std::fprintf(stderr, "usage: loom-check-paths [--exclude=PATH]... "
                       "[--index=PAGE]... ROOT\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string root;
  std::set<std::string> excluded, indexes;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (startsWith(arg, "--exclude="))
      excluded.insert(std::string(arg.substr(10)));
    else if (startsWith(arg, "--index="))
      indexes.insert(std::string(arg.substr(8)));
    else if (!arg.empty() && arg[0] != '-' && root.empty())
      root = std::string(arg);
    else
      return usage();
  }
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec))
    return usage();
  Repo repo(fs::absolute(root, ec).lexically_normal());
  for (const std::set<std::string> *given : {&excluded, &indexes})
    for (const std::string &rel : *given)
      if (!repo.exists(rel)) {
        std::fprintf(stderr, "loom-check-paths: error: %s does not exist\n",
                     rel.c_str());
        return 2;
      }
  std::vector<std::string> files = listFiles(repo, excluded);
  for (const std::string &rel : files)
    repo.addFile(rel);
  Checker checker(repo);
  for (const std::string &rel : files) {
    if (endsWith(rel, ".md"))
      checker.checkMarkdownFile(rel);
    else if (isSourceFile(rel))
      checker.checkSourceFile(rel);
  }
  for (const std::string &index : indexes)
    checker.checkIndex(index, files);
  const std::vector<Problem> &problems = checker.getProblems();
  if (!problems.empty()) {
    printProblems(problems);
    return 1;
  }
  std::printf("loom-check-paths: %zu files, %u links and %u paths: all "
              "exist\n",
              files.size(), checker.getNumLinks(), checker.getNumPaths());
  return 0;
}
