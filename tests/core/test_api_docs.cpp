// docs/api.md's C++ examples compile: tests/api/docs_examples.cu (built with the tests by nvcc as
// C++17) holds every line of every ```cpp block of the page, in order; this checks that it does,
// so that an example edited on the page and not in the file (or the other way round) fails here.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trimmed(const std::string& line) {
  const auto b = line.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return line.substr(b, line.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(trimmed(line));
  return out;
}

}  // namespace

TEST_CASE("every C++ example of docs/api.md is in tests/api/docs_examples.cu, line for line, in order") {
  const std::string source = GPUK_SOURCE_DIR;
  const auto page = lines(read(source + "/docs/api.md"));
  const auto file = lines(read(source + "/tests/api/docs_examples.cu"));
  std::size_t at = 0;  // where the search in the file goes on from: the blocks are in the page's order
  int blocks = 0;
  for (std::size_t i = 0; i < page.size(); ++i) {
    if (page[i] != "```cpp") continue;
    ++blocks;
    for (++i; i < page.size() && page[i] != "```"; ++i) {
      if (page[i].empty()) continue;
      std::size_t j = at;
      while (j < file.size() && file[j] != page[i]) ++j;
      CHECK_MESSAGE(j < file.size(), "docs/api.md line " << i + 1 << " (example " << blocks << ") is not in "
                                                         << "tests/api/docs_examples.cu after its line " << at
                                                         << ": " << page[i]);
      if (j < file.size()) at = j + 1;
    }
  }
  CHECK(blocks >= 8);
}
