// SPDX-License-Identifier: Apache-2.0
#include "journal.hpp"

#include <cstdlib>
#include <fstream>
#include <map>

namespace exchange {

namespace {

void put_string(std::string& out, const char* name, const std::string& v) {
  out += '"';
  out += name;
  out += "\":\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += "\",";
}

void put_char(std::string& out, const char* name, char v) {
  put_string(out, name, std::string(1, v));
}

template <class Int>
void put_int(std::string& out, const char* name, Int v) {
  out += '"';
  out += name;
  out += "\":";
  out += std::to_string(v);
  out += ',';
}

void put_price(std::string& out, const char* name, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "\"%s\":%.10g,", name, v);
  out += buf;
}

void end_line(std::string& out) {
  out.back() = '}';
  out += '\n';
}

// Reads one flat JSON object of strings and numbers into `fields`.
bool parse_flat(const std::string& line,
                std::map<std::string, std::string>& fields) {
  size_t i = 0;
  auto skip = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
      ++i;
  };
  auto string = [&](std::string& s) {
    if (i >= line.size() || line[i] != '"')
      return false;
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] != '\\') {
        s += line[i];
        continue;
      }
      if (++i >= line.size())
        return false;
      if (line[i] == 'u') {
        if (i + 4 >= line.size())
          return false;
        s += static_cast<char>(std::strtol(line.substr(i + 1, 4).c_str(),
                                           nullptr, 16));
        i += 4;
      } else {
        s += line[i];
      }
    }
    if (i >= line.size())
      return false;
    ++i;
    return true;
  };
  skip();
  if (i >= line.size() || line[i++] != '{')
    return false;
  for (;;) {
    skip();
    std::string name, value;
    if (!string(name))
      return false;
    skip();
    if (i >= line.size() || line[i++] != ':')
      return false;
    skip();
    if (i < line.size() && line[i] == '"') {
      if (!string(value))
        return false;
    } else {
      while (i < line.size() && line[i] != ',' && line[i] != '}')
        value += line[i++];
      if (value.empty())
        return false;
    }
    fields[name] = value;
    skip();
    if (i >= line.size())
      return false;
    if (line[i] == '}')
      return true;
    if (line[i++] != ',')
      return false;
  }
}

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
  return true;
}

void journal_writer::order(const journal_order& o) {
  if (!file_)
    return;
  auto& rq = o.request;
  line_ = "{";
  put_string(line_, "type", "order");
  put_string(line_, "symbol", rq.symbol);
  put_int(line_, "seq", o.seq);
  put_char(line_, "kind", static_cast<char>(rq.kind));
  put_int(line_, "session", rq.session);
  put_string(line_, "cl_ord_id", rq.cl_ord_id);
  put_string(line_, "orig_cl_ord_id", rq.orig_cl_ord_id);
  put_string(line_, "account", rq.account);
  put_char(line_, "side", static_cast<char>(rq.sd));
  put_price(line_, "price", rq.price);
  put_int(line_, "qty", rq.qty);
  put_char(line_, "ord_type", rq.ord_type);
  put_char(line_, "tif", rq.time_in_force);
  put_string(line_, "risk", o.risk);
  end_line(line_);
  std::fwrite(line_.data(), 1, line_.size(), file_);
}

void journal_writer::report(uint64_t seq, const exec_report& r) {
  if (!file_)
    return;
  line_ = "{";
  put_string(line_, "type", "report");
  put_string(line_, "symbol", r.symbol);
  put_int(line_, "seq", seq);
  put_int(line_, "symbol_seq", r.symbol_seq);
  put_char(line_, "kind", static_cast<char>(r.kind));
  put_int(line_, "session", r.session);
  put_string(line_, "order_id", r.order_id);
  put_string(line_, "exec_id", r.exec_id);
  put_string(line_, "cl_ord_id", r.cl_ord_id);
  put_string(line_, "orig_cl_ord_id", r.orig_cl_ord_id);
  put_string(line_, "account", r.account);
  put_char(line_, "side", static_cast<char>(r.sd));
  put_price(line_, "price", r.price);
  put_int(line_, "order_qty", r.order_qty);
  put_int(line_, "last_qty", r.last_qty);
  put_price(line_, "last_px", r.last_px);
  put_int(line_, "leaves_qty", r.leaves_qty);
  put_int(line_, "cum_qty", r.cum_qty);
  put_price(line_, "avg_px", r.avg_px);
  put_int(line_, "reject_reason", r.reject_reason);
  put_char(line_, "cxl_rej_response_to", r.cxl_rej_response_to);
  put_string(line_, "text", r.text);
  end_line(line_);
  std::fwrite(line_.data(), 1, line_.size(), file_);
}

bool journal_writer::close() {
  if (!file_)
    return true;
  bool ok = std::ferror(file_) == 0;
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
  std::map<std::string, std::string> f;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty())
      continue;
    f.clear();
    auto where = path + ":" + std::to_string(n) + ": ";
    if (!parse_flat(line, f)) {
      error = where + "not a flat JSON object";
      return false;
    }
    auto get = [&](const char* k) -> const std::string& { return f[k]; };
    auto num = [&](const char* k) { return std::strtoll(get(k).c_str(), nullptr, 10); };
    auto chr = [&](const char* k) { return get(k).empty() ? '\0' : get(k)[0]; };
    auto real = [&](const char* k) { return std::strtod(get(k).c_str(), nullptr); };
    if (get("type") == "order") {
      journal_order o;
      o.seq = static_cast<uint64_t>(num("seq"));
      auto& rq = o.request;
      rq.kind = static_cast<request_kind>(chr("kind"));
      rq.session = static_cast<int>(num("session"));
      rq.cl_ord_id = get("cl_ord_id");
      rq.orig_cl_ord_id = get("orig_cl_ord_id");
      rq.account = get("account");
      rq.symbol = get("symbol");
      rq.sd = static_cast<side>(chr("side"));
      rq.price = real("price");
      rq.qty = num("qty");
      rq.ord_type = chr("ord_type");
      rq.time_in_force = chr("tif");
      o.risk = get("risk");
      out.orders.push_back(std::move(o));
    } else if (get("type") == "report") {
      journal_report jr;
      jr.seq = static_cast<uint64_t>(num("seq"));
      auto& r = jr.report;
      r.symbol = get("symbol");
      r.symbol_seq = static_cast<uint64_t>(num("symbol_seq"));
      r.kind = static_cast<report_kind>(chr("kind"));
      r.session = static_cast<int>(num("session"));
      r.order_id = get("order_id");
      r.exec_id = get("exec_id");
      r.cl_ord_id = get("cl_ord_id");
      r.orig_cl_ord_id = get("orig_cl_ord_id");
      r.account = get("account");
      r.sd = static_cast<side>(chr("side"));
      r.price = real("price");
      r.order_qty = num("order_qty");
      r.last_qty = num("last_qty");
      r.last_px = real("last_px");
      r.leaves_qty = num("leaves_qty");
      r.cum_qty = num("cum_qty");
      r.avg_px = real("avg_px");
      r.reject_reason = static_cast<int>(num("reject_reason"));
      r.cxl_rej_response_to = chr("cxl_rej_response_to");
      r.text = get("text");
      out.reports.push_back(std::move(jr));
    } else {
      error = where + "type must be \"order\" or \"report\"";
      return false;
    }
  }
  return true;
}

} // namespace exchange
