// `gpuk run --markdown FILE` and the report's copy figures, on a report made here (no GPU).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.hpp"
#include "report/run_report.hpp"
#include "run/runner.hpp"

using namespace gpuk;

namespace {

RunReport sample() {
  RunReport r;
  r.config = "configs/argmax.yaml";
  r.family = "reduce";
  r.operation = "argmax";
  r.options = {{"abs", "true"}};
  r.dtype = "float32";
  r.size = 250000;
  r.variant = "onepass BLOCK=256";
  r.kernel_file = "kernels_src/reduce/onepass.cu";
  r.gpu = "G";
  r.arch = "sm_90";
  r.upload_ms = 0.5;
  r.upload_bytes = 1000000000;  // 1 GB in 0.5 ms: 2000 GB/s
  r.download_ms = 0.25;
  r.download_bytes = 16;
  r.kernel = Stats::of({1.0, 2.0, 3.0, 4.0, 5.0});
  r.total_ms = 3.75;
  r.baseline = NamedStats{"cub::DeviceReduce::ArgMax", Stats::of({6.0}), ""};
  r.verified = true;
  r.verification = {true, "value 0.99 at index 7"};
  DataSpec data;
  data.generator = Generator::few_distinct;
  data.distinct = 16;
  data.seed = 3;
  r.data = summarize_data(data, DType::uint32, r.size);
  return r;
}

}  // namespace

TEST_CASE("a run's times have quartiles, the spread compare reads") {
  const Stats s = Stats::of({5.0, 1.0, 4.0, 2.0, 3.0});
  CHECK(s.median == 3.0);
  CHECK(s.q1 == 2.0);
  CHECK(s.q3 == 4.0);
}

TEST_CASE("the Markdown report is a heading, what ran and a table of times") {
  std::ostringstream out;
  print_markdown(out, sample());
  const std::string md = out.str();
  CAPTURE(md);
  CHECK(md.rfind("### gpuk run `configs/argmax.yaml`\n", 0) == 0);
  CHECK(md.find("- **reduce argmax** abs=true, float32, n = 250000") != std::string::npos);
  CHECK(md.find("| upload (2000.0 GB/s, page-locked) | 0.5000 |") != std::string::npos);
  CHECK(md.find("| kernel `onepass BLOCK=256` | 3.000 | 2.000 | 4.000 | 1.000 | 5.000 | 5 |") != std::string::npos);
  CHECK(md.find("Verify: PASS (value 0.99 at index 7).") != std::string::npos);
}

TEST_CASE("the printed report gives both copies' GB/s and says when the input was not page-locked") {
  RunReport r = sample();
  std::ostringstream locked;
  print_report(locked, r);
  CHECK(locked.str().find("upload 2000.0 GB/s") != std::string::npos);
  CHECK(locked.str().find("page-locked), download 0.0 GB/s (16 B)") != std::string::npos);
  r.pin_note = "cuMemHostRegister: CUDA_ERROR_OUT_OF_MEMORY";
  std::ostringstream pageable;
  print_report(pageable, r);
  CHECK(pageable.str().find("pageable") != std::string::npos);
}

TEST_CASE("every form of a run's report states the data it measured") {
  const RunReport r = sample();
  const std::string text = "few_distinct in [0, 4294967295], seed 3, at most 16 distinct values";
  std::ostringstream printed, md;
  print_report(printed, r);
  print_markdown(md, r);
  CHECK(printed.str().find("  data     " + text + "\n") != std::string::npos);
  CHECK(md.str().find("- data: " + text + "\n") != std::string::npos);

  const test::TempDir dir;
  write_json(dir.path() / "r.json", r);
  std::ifstream json_in(dir.path() / "r.json");
  const auto j = nlohmann::json::parse(json_in);
  CHECK(j["data"]["generator"] == "few_distinct");
  CHECK(j["data"]["range"] == "[0, 4294967295]");
  CHECK(j["data"]["seed"] == 3);
  CHECK(j["data"]["distinct_at_most"] == 16);
  CHECK(j["data"]["text"] == text);

  write_csv(dir.path() / "r.csv", r);
  std::ifstream csv(dir.path() / "r.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  CHECK(header.find(",data_generator,data_range,data_seed,data_distinct_at_most,data") != std::string::npos);
  CHECK(row.find(",few_distinct,\"[0, 4294967295]\",3,16,\"" + text + "\"") != std::string::npos);
}

TEST_CASE("a declared kernel's report names its sizes, not a dtype and their product") {
  RunReport r = sample();
  r.family = "kernel";
  r.operation = "matmul";
  r.options.clear();
  r.sizes = {{"k", 512}, {"m", 256}, {"n", 128}};
  r.size = 512 * 256 * 128;
  std::ostringstream printed, md;
  print_report(printed, r);
  print_markdown(md, r);
  CAPTURE(printed.str());
  CHECK(printed.str().find("  kernel matmul  sizes k=512 m=256 n=128\n") != std::string::npos);
  CHECK(printed.str().find(std::to_string(r.size)) == std::string::npos);
  CHECK(md.str().find("- **kernel matmul**, sizes k=512 m=256 n=128\n") != std::string::npos);
  const test::TempDir dir;
  write_json(dir.path() / "r.json", r);
  std::ifstream json_in(dir.path() / "r.json");
  const auto j = nlohmann::json::parse(json_in);
  CHECK(j["sizes"]["m"] == 256);
  CHECK(j["size"] == r.size);
  // A family's run has no sizes object.
  write_json(dir.path() / "f.json", sample());
  std::ifstream f_in(dir.path() / "f.json");
  CHECK(!nlohmann::json::parse(f_in).contains("sizes"));
}
