// SPDX-License-Identifier: Apache-2.0
#include "journal.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace exchange {

namespace {

using json = nlohmann::ordered_json;

// Each line is one JSON object; nlohmann writes and reads the escapes
// (\uXXXX and surrogate pairs included), so a symbol or text in any script
// survives the round trip and journals written by other tools read back.
// Keys keep the order they are written in, so the lines stay readable.
void put_char(json& line, const char* name, char v) {
  line[name] = std::string(1, v);
}

std::string text_of(const json& line) {
  // A byte that is not UTF-8 (FIX fields are bytes) becomes U+FFFD rather
  // than an exception on the output thread.
  return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Lines gathered before a write: about as many writes as stdio's buffer
// made, but each ends on a line's end (stdio's cut lines at 4 KiB).
constexpr size_t write_after = 64 * 1024;

// A field read leniently, as the journal has always been read: missing is
// empty or zero, and a number may also come as a string.
class fields {
public:
  explicit fields(const json& j) : j_(j) {}

  std::string str(const char* k) const {
    auto it = j_.find(k);
    return it != j_.end() && it->is_string() ? it->get<std::string>()
                                             : std::string{};
  }
  int64_t num(const char* k) const {
    auto it = j_.find(k);
    if (it == j_.end())
      return 0;
    if (it->is_number())
      return it->get<int64_t>();
    return it->is_string() ? std::strtoll(it->get_ref<const std::string&>().c_str(),
                                          nullptr, 10)
                           : 0;
  }
  double real(const char* k) const {
    auto it = j_.find(k);
    if (it == j_.end())
      return 0;
    if (it->is_number())
      return it->get<double>();
    return it->is_string()
             ? std::strtod(it->get_ref<const std::string&>().c_str(), nullptr)
             : 0;
  }
  char chr(const char* k) const {
    auto s = str(k);
    return s.empty() ? '\0' : s[0];
  }

private:
  const json& j_;
};

} // namespace

journal_writer::~journal_writer() {
  close();
}

bool journal_writer::open(const std::string& path, std::string& error) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) {
    error = "cannot write the journal " + path;
    return false;
  }
  path_ = path;
  // The buffering is `pending_`'s, in whole lines: unbuffered, stdio
  // hands each block to the kernel in one write.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  return true;
}

void journal_writer::put(const std::string& line) {
  pending_ += line;
  pending_ += '\n';
  if (pending_.size() >= std::max(write_after, retry_at_))
    flush_lines();
}

bool journal_writer::flush_lines() {
  if (pending_.empty())
    return true;
  size_t n;
  if (write_fault != 0) {
    n = std::fwrite(pending_.data(), 1, pending_.size() / 2, file_);
    errno = write_fault;
  } else {
    n = std::fwrite(pending_.data(), 1, pending_.size(), file_);
  }
  if (n == pending_.size()) {
    if (failing_)
      std::cerr << "exchange: journal " << path_
                << ": writing works again; the lines that waited are written\n";
    failing_ = false;
    written_ += n;
    pending_.clear();
    retry_at_ = 0;
    return true;
  }
  // A full or failing disk: cut what part of the block reached the file,
  // so that the journal ends on its last whole line (a line cut in the
  // middle would be damage once later lines follow it), and keep the
  // lines for the next try, one block of lines later.
  int err = errno;
  std::clearerr(file_);
  static_cast<void>(::ftruncate(::fileno(file_), static_cast<off_t>(written_)));
  static_cast<void>(::fseeko(file_, static_cast<off_t>(written_), SEEK_SET));
  if (!failing_)
    std::cerr << "exchange: journal " << path_ << ": cannot write ("
              << std::strerror(err)
              << "): its lines wait in memory and are written when the disk "
                 "takes them\n";
  failing_ = true;
  retry_at_ = pending_.size() + write_after;
  return false;
}

void journal_writer::order(const journal_order& o) {
  if (!file_)
    return;
  auto& rq = o.request;
  json line;
  line["type"] = "order";
  line["symbol"] = rq.symbol;
  line["seq"] = o.seq;
  put_char(line, "kind", static_cast<char>(rq.kind));
  line["session"] = rq.session;
  line["cl_ord_id"] = rq.cl_ord_id;
  line["orig_cl_ord_id"] = rq.orig_cl_ord_id;
  line["account"] = rq.account;
  put_char(line, "side", static_cast<char>(rq.sd));
  line["price"] = rq.price;
  line["qty"] = rq.qty;
  put_char(line, "ord_type", rq.ord_type);
  put_char(line, "tif", rq.time_in_force);
  line["risk"] = o.risk;
  put(text_of(line));
}

void journal_writer::report(uint64_t seq, const exec_report& r) {
  if (!file_)
    return;
  json line;
  line["type"] = "report";
  line["symbol"] = r.symbol;
  line["seq"] = seq;
  line["symbol_seq"] = r.symbol_seq;
  put_char(line, "kind", static_cast<char>(r.kind));
  line["session"] = r.session;
  line["order_id"] = r.order_id;
  line["exec_id"] = r.exec_id;
  line["cl_ord_id"] = r.cl_ord_id;
  line["orig_cl_ord_id"] = r.orig_cl_ord_id;
  line["account"] = r.account;
  put_char(line, "side", static_cast<char>(r.sd));
  line["price"] = r.price;
  line["order_qty"] = r.order_qty;
  line["last_qty"] = r.last_qty;
  line["last_px"] = r.last_px;
  line["leaves_qty"] = r.leaves_qty;
  line["cum_qty"] = r.cum_qty;
  line["avg_px"] = r.avg_px;
  line["reject_reason"] = r.reject_reason;
  put_char(line, "cxl_rej_response_to", r.cxl_rej_response_to);
  line["text"] = r.text;
  put(text_of(line));
}

bool journal_writer::close() {
  if (!file_)
    return true;
  bool ok = flush_lines();
  if (!ok)
    std::cerr << "exchange: journal " << path_ << ": "
              << std::count(pending_.begin(), pending_.end(), '\n')
              << " lines could not be written; the journal ends on the last "
                 "whole line before them\n";
  ok = std::ferror(file_) == 0 && ok;
  ok = std::fclose(file_) == 0 && ok;
  file_ = nullptr;
  return ok;
}

bool read_journal(const std::string& path, journal_contents& out,
                  std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the journal " + path;
    return false;
  }
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty())
      continue;
    bool last_without_newline = in.eof();
    auto where = path + ":" + std::to_string(n) + ": ";
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (last_without_newline) {
        out.cut_line = n;
        break;
      }
      error = where + "not a flat JSON object";
      return false;
    }
    fields f{j};
    if (f.str("type") == "order") {
      journal_order o;
      o.seq = static_cast<uint64_t>(f.num("seq"));
      auto& rq = o.request;
      rq.kind = static_cast<request_kind>(f.chr("kind"));
      rq.session = static_cast<int>(f.num("session"));
      rq.cl_ord_id = f.str("cl_ord_id");
      rq.orig_cl_ord_id = f.str("orig_cl_ord_id");
      rq.account = f.str("account");
      rq.symbol = f.str("symbol");
      rq.sd = static_cast<side>(f.chr("side"));
      rq.price = f.real("price");
      rq.qty = f.num("qty");
      rq.ord_type = f.chr("ord_type");
      rq.time_in_force = f.chr("tif");
      o.risk = f.str("risk");
      out.orders.push_back(std::move(o));
    } else if (f.str("type") == "report") {
      journal_report jr;
      jr.seq = static_cast<uint64_t>(f.num("seq"));
      auto& r = jr.report;
      r.symbol = f.str("symbol");
      r.symbol_seq = static_cast<uint64_t>(f.num("symbol_seq"));
      r.kind = static_cast<report_kind>(f.chr("kind"));
      r.session = static_cast<int>(f.num("session"));
      r.order_id = f.str("order_id");
      r.exec_id = f.str("exec_id");
      r.cl_ord_id = f.str("cl_ord_id");
      r.orig_cl_ord_id = f.str("orig_cl_ord_id");
      r.account = f.str("account");
      r.sd = static_cast<side>(f.chr("side"));
      r.price = f.real("price");
      r.order_qty = f.num("order_qty");
      r.last_qty = f.num("last_qty");
      r.last_px = f.real("last_px");
      r.leaves_qty = f.num("leaves_qty");
      r.cum_qty = f.num("cum_qty");
      r.avg_px = f.real("avg_px");
      r.reject_reason = static_cast<int>(f.num("reject_reason"));
      r.cxl_rej_response_to = f.chr("cxl_rej_response_to");
      r.text = f.str("text");
      out.reports.push_back(std::move(jr));
    } else {
      error = where + "type must be \"order\" or \"report\"";
      return false;
    }
  }
  return true;
}

} // namespace exchange
