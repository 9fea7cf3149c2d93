// SPDX-License-Identifier: Apache-2.0
#include "measure.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace keylane::bench {

namespace {

// A number field of /proc/self/status ("VmRSS", in kB; "Threads"), 0 if
// unreadable.
double status_field(const char* field) {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  auto len = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, len, field) == 0 && line.size() > len
        && line[len] == ':')
      return std::strtod(line.c_str() + len + 1, nullptr);
  return 0;
}

double status_field_mb(const char* field) {
  return status_field(field) / 1024.0;
}

} // namespace

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
  };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

uint64_t process_context_switches() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_nvcsw) + static_cast<uint64_t>(ru.ru_nivcsw);
}

double rss_mb() { return status_field_mb("VmRSS"); }

double peak_rss_mb() { return status_field_mb("VmHWM"); }

int process_threads() { return static_cast<int>(status_field("Threads")); }

bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f)
    return false;
  bool ok = std::fputs("5", f) >= 0;
  ok = (std::fclose(f) == 0) && ok;
  return ok;
}

bool peak_reset_works() {
  static const bool works = [] {
    constexpr size_t size = 64u << 20;
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return false;
    std::memset(p, 1, size);
    munmap(p, size);
    double before = peak_rss_mb();
    if (!reset_peak_rss())
      return false;
    double after = peak_rss_mb();
    return after > 0 && before - after > 48.0;
  }();
  return works;
}

cpu_sample sample_cpu() {
  std::ifstream in{"/proc/stat"};
  std::string cpu;
  unsigned long long v[10] = {};
  in >> cpu;
  for (auto& x : v)
    in >> x;
  double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  cpu_sample s;
  // user nice system idle iowait irq softirq steal guest guest_nice
  s.busy = static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
  s.steal = static_cast<double>(v[7]) / hz;
  s.total = static_cast<double>(v[0] + v[1] + v[2] + v[3] + v[4] + v[5]
                                + v[6] + v[7]) / hz;
  return s;
}

double other_load(const cpu_sample& a, const cpu_sample& b, double own_cpu_s) {
  double total = b.total - a.total;
  if (total <= 0)
    return 0;
  double other = (b.busy - a.busy) - own_cpu_s + (b.steal - a.steal);
  if (other < 0)
    other = 0; // /proc/stat ticks are coarser than getrusage
  return other / total;
}

unsigned cores() {
  auto n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1u;
}

double load_average() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : 0;
}

std::string machine_description() {
  std::ifstream in{"/proc/cpuinfo"};
  std::string line, model = "unknown CPU", mhz, family, model_no;
  auto value = [](const std::string& l) {
    auto pos = l.find(':');
    auto v = pos == std::string::npos ? std::string{} : l.substr(pos + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  };
  bool first_done = false;
  while (!first_done && std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0)
      model = value(line);
    else if (line.rfind("cpu MHz", 0) == 0)
      mhz = value(line);
    else if (line.rfind("cpu family", 0) == 0)
      family = value(line);
    else if (line.rfind("model", 0) == 0 && line.rfind("model name", 0) != 0)
      model_no = value(line);
    else if (line.empty())
      first_done = true;
  }
  std::ostringstream out;
  out << model;
  if (!family.empty())
    out << " (family " << family << ", model " << model_no << ")";
  out << ", " << cores() << " cores";
  if (!mhz.empty())
    out << " @ " << static_cast<int>(std::strtod(mhz.c_str(), nullptr))
        << " MHz";
  utsname u{};
  if (uname(&u) == 0)
    out << ", Linux " << u.release;
  return out.str();
}

} // namespace keylane::bench
