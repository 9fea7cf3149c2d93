// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>

#include "journal.hpp"

using namespace exchange;

namespace {

// A file of its own per test, removed at the end.
struct temp_file {
  std::filesystem::path path;
  temp_file() {
    path = std::filesystem::temp_directory_path()
           / ("exchange-journal-" + std::to_string(std::random_device{}())
              + ".jsonl");
  }
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

} // namespace

TEST_CASE("a journal's \\u escapes read back as UTF-8, surrogate pairs "
          "included", "[exchange][journal]") {
  temp_file f;
  // As another program (Python's json.dumps) writes it: every non-ASCII
  // character escaped.
  std::ofstream{f.path}
    << R"({"type":"order","symbol":"\u00c9TAT","seq":1,"kind":"D",)"
    << R"("session":0,"cl_ord_id":"c1","orig_cl_ord_id":"","account":"A",)"
    << R"("side":"1","price":10.5,"qty":3,"ord_type":"2","tif":"0","risk":""})"
    << '\n'
    << R"({"type":"report","symbol":"\u00c9TAT","seq":1,"symbol_seq":1,)"
    << R"("kind":"8","session":0,"text":"r\u00e9f\u00e9rence \ud83d\udcc8"})"
    << '\n';
  journal_contents c;
  std::string error;
  REQUIRE(read_journal(f.path.string(), c, error));
  REQUIRE(c.orders.size() == 1);
  REQUIRE(c.reports.size() == 1);
  CHECK(c.orders[0].request.symbol == "\xc3\x89TAT");
  CHECK(c.orders[0].request.price == 10.5);
  CHECK(c.orders[0].request.qty == 3);
  CHECK(c.reports[0].report.symbol == "\xc3\x89TAT");
  CHECK(c.reports[0].report.text == "r\xc3\xa9" "f\xc3\xa9rence \xf0\x9f\x93\x88");
}

TEST_CASE("a journal written with a non-ASCII symbol and text reads back "
          "unchanged", "[exchange][journal]") {
  temp_file f;
  journal_writer w;
  std::string error;
  REQUIRE(w.open(f.path.string(), error));
  journal_order o;
  o.seq = 7;
  o.request.symbol = "\xe6\x9d\xb1\xe4\xba\xac"; // 東京
  o.request.cl_ord_id = "quote\"back\\slash\ttab";
  o.request.price = 101.25;
  o.request.qty = 40;
  w.order(o);
  exec_report r;
  r.symbol = o.request.symbol;
  r.symbol_seq = 3;
  r.kind = report_kind::rejected;
  r.text = "Pr\xc3\xbc" "fung fehlgeschlagen";
  w.report(7, r);
  REQUIRE(w.close());
  journal_contents c;
  REQUIRE(read_journal(f.path.string(), c, error));
  REQUIRE(c.orders.size() == 1);
  REQUIRE(c.reports.size() == 1);
  CHECK(c.orders[0].seq == 7);
  CHECK(c.orders[0].request.symbol == o.request.symbol);
  CHECK(c.orders[0].request.cl_ord_id == o.request.cl_ord_id);
  CHECK(c.orders[0].request.price == 101.25);
  CHECK(c.reports[0].report.symbol_seq == 3);
  CHECK(c.reports[0].report.kind == report_kind::rejected);
  CHECK(c.reports[0].report.text == r.text);
}

TEST_CASE("a journal line that is not a JSON object is named with its line",
          "[exchange][journal]") {
  temp_file f;
  std::ofstream{f.path} << R"({"type":"order","seq":1})" << "\n{\"type\":\n";
  journal_contents c;
  std::string error;
  CHECK_FALSE(read_journal(f.path.string(), c, error));
  CHECK(error == f.path.string() + ":2: not a flat JSON object");
}

TEST_CASE("the journal on disk ends on a whole line after every write",
          "[exchange][journal]") {
  // What a process that dies at any moment leaves: the file as written so
  // far. stdio's 4 KiB buffer cut a line at each of its writes.
  temp_file f;
  journal_writer w;
  std::string error;
  REQUIRE(w.open(f.path.string(), error));
  journal_order o;
  o.request.symbol = "S0001";
  o.request.cl_ord_id = "c";
  o.request.account = "ACCT";
  size_t writes_seen = 0;
  uintmax_t last_size = 0;
  for (uint64_t i = 1; i <= 5000; ++i) {
    o.seq = i;
    o.request.cl_ord_id = "c" + std::to_string(i * 7919); // varied lengths
    w.order(o);
    auto size = std::filesystem::file_size(f.path);
    if (size == last_size)
      continue;
    ++writes_seen;
    last_size = size;
    std::ifstream in(f.path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(size) - 1);
    CHECK(in.get() == '\n');
  }
  CHECK(writes_seen > 0); // the check above ran on data the writer let go
  REQUIRE(w.close());
  journal_contents c;
  REQUIRE(read_journal(f.path.string(), c, error));
  CHECK(c.orders.size() == 5000);
  CHECK(c.cut_line == 0);
}

TEST_CASE("an incomplete last line is skipped and named, a bad line before "
          "it is still an error", "[exchange][journal]") {
  temp_file f;
  std::ofstream{f.path} << R"({"type":"order","seq":1})" << '\n'
                        << R"({"type":"order","seq":2})" << '\n'
                        << R"({"type":"report","sym)";
  journal_contents c;
  std::string error;
  REQUIRE(read_journal(f.path.string(), c, error));
  CHECK(c.orders.size() == 2);
  CHECK(c.reports.empty());
  CHECK(c.cut_line == 3);

  // A whole last line without its newline still counts.
  temp_file g;
  std::ofstream{g.path} << R"({"type":"order","seq":1})";
  journal_contents d;
  REQUIRE(read_journal(g.path.string(), d, error));
  CHECK(d.orders.size() == 1);
  CHECK(d.cut_line == 0);

  // Only the last line may be cut: a bad line with its newline is an error.
  temp_file h;
  std::ofstream{h.path} << R"({"type":"ord)" << '\n'
                        << R"({"type":"order","seq":2})" << '\n';
  journal_contents e;
  CHECK_FALSE(read_journal(h.path.string(), e, error));
  CHECK(error == h.path.string() + ":1: not a flat JSON object");
}

namespace {

journal_order numbered(uint64_t i) {
  journal_order o;
  o.seq = i;
  o.request.symbol = "S0001";
  o.request.account = "ACCT";
  o.request.cl_ord_id = "c" + std::to_string(i * 7919);
  return o;
}

} // namespace

TEST_CASE("a journal write the disk refuses leaves no torn line and loses "
          "no line: they are written once the disk takes them again",
          "[exchange][journal][disk]") {
  temp_file f;
  journal_writer w;
  std::string error;
  REQUIRE(w.open(f.path.string(), error));
  uint64_t i = 0;
  while (++i <= 1000)
    w.order(numbered(i));
  w.write_fault = ENOSPC; // the disk fills up
  for (; i <= 3000; ++i)
    w.order(numbered(i));
  {
    // What is on disk meanwhile is whole lines, in order.
    journal_contents c;
    bool read = read_journal(f.path.string(), c, error);
    INFO(error);
    REQUIRE(read);
    CHECK(c.cut_line == 0);
    for (size_t n = 0; n < c.orders.size(); ++n)
      CHECK(c.orders[n].seq == n + 1);
  }
  w.write_fault = 0; // space again
  for (; i <= 4000; ++i)
    w.order(numbered(i));
  REQUIRE(w.close());
  journal_contents c;
  INFO(error);
  REQUIRE(read_journal(f.path.string(), c, error));
  CHECK(c.cut_line == 0);
  REQUIRE(c.orders.size() == 4000);
  for (size_t n = 0; n < c.orders.size(); ++n)
    CHECK(c.orders[n].seq == n + 1);
}

TEST_CASE("a journal closed while the disk refuses it ends on a whole line "
          "and close says it is incomplete", "[exchange][journal][disk]") {
  temp_file f;
  journal_writer w;
  std::string error;
  REQUIRE(w.open(f.path.string(), error));
  uint64_t i = 0;
  while (++i <= 1000)
    w.order(numbered(i));
  w.write_fault = ENOSPC;
  for (; i <= 2000; ++i)
    w.order(numbered(i));
  CHECK_FALSE(w.close());
  journal_contents c;
  bool read = read_journal(f.path.string(), c, error);
  INFO(error);
  REQUIRE(read);
  CHECK(c.cut_line == 0);
  CHECK(c.orders.size() < 2000);
  for (size_t n = 0; n < c.orders.size(); ++n)
    CHECK(c.orders[n].seq == n + 1);
}
