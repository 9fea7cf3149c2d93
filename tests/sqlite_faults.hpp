// SPDX-License-Identifier: Apache-2.0
#pragma once

// An SQLite VFS whose writes fail on demand, for the disk-fault tests of
// the park store: while it is registered as the default VFS every SQLite
// file the process opens goes through it; `set_failing(true)` makes each
// write and sync fail as a full disk does (SQLITE_FULL), `false` makes the
// disk work again. Unregistered when it goes.

#include <atomic>
#include <cstdint>
#include <cstring>

#include <sqlite3.h>

namespace disk_faults {

/// One at a time: it replaces the process's default VFS while it lives.
class sqlite_faults {
public:
  sqlite_faults() {
    base_ = sqlite3_vfs_find(nullptr);
    vfs_ = *base_;
    vfs_.zName = "keylane_test_failing_vfs";
    vfs_.szOsFile = static_cast<int>(sizeof(file) + base_->szOsFile);
    vfs_.pAppData = this;
    vfs_.xOpen = &open;
    self() = this;
    sqlite3_vfs_register(&vfs_, 1);
  }
  ~sqlite_faults() {
    sqlite3_vfs_unregister(&vfs_);
    self() = nullptr;
  }
  sqlite_faults(const sqlite_faults&) = delete;
  sqlite_faults& operator=(const sqlite_faults&) = delete;

  void set_failing(bool on) noexcept { failing_.store(on); }
  uint64_t injected() const noexcept { return injected_.load(); }

private:
  // Our file: its methods, then the base VFS's file right behind it.
  struct file {
    sqlite3_file base;
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };

  static sqlite_faults*& self() {
    static sqlite_faults* s = nullptr;
    return s;
  }
  static sqlite3_file* real(sqlite3_file* f) {
    return reinterpret_cast<file*>(f)->real();
  }
  static bool fail() {
    auto* s = self();
    if (s == nullptr || !s->failing_.load())
      return false;
    ++s->injected_;
    return true;
  }

  static int open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f,
                  int flags, int* out_flags) {
    auto* me = static_cast<sqlite_faults*>(vfs->pAppData);
    auto* ours = reinterpret_cast<file*>(f);
    std::memset(ours, 0, sizeof(file));
    int rc = me->base_->xOpen(me->base_, name, ours->real(), flags, out_flags);
    if (rc != SQLITE_OK)
      return rc;
    // Our method table: the real file's, with writes and syncs wrapped.
    const auto* m = ours->real()->pMethods;
    if (methods().iVersion == 0) {
      methods() = *m;
      methods().xClose = [](sqlite3_file* x) {
        return real(x)->pMethods->xClose(real(x));
      };
      methods().xRead = [](sqlite3_file* x, void* p, int n, sqlite3_int64 o) {
        return real(x)->pMethods->xRead(real(x), p, n, o);
      };
      methods().xWrite = [](sqlite3_file* x, const void* p, int n,
                            sqlite3_int64 o) {
        if (fail())
          return SQLITE_FULL;
        return real(x)->pMethods->xWrite(real(x), p, n, o);
      };
      methods().xTruncate = [](sqlite3_file* x, sqlite3_int64 n) {
        return real(x)->pMethods->xTruncate(real(x), n);
      };
      methods().xSync = [](sqlite3_file* x, int fl) {
        if (fail())
          return SQLITE_IOERR_FSYNC;
        return real(x)->pMethods->xSync(real(x), fl);
      };
      methods().xFileSize = [](sqlite3_file* x, sqlite3_int64* n) {
        return real(x)->pMethods->xFileSize(real(x), n);
      };
      methods().xLock = [](sqlite3_file* x, int l) {
        return real(x)->pMethods->xLock(real(x), l);
      };
      methods().xUnlock = [](sqlite3_file* x, int l) {
        return real(x)->pMethods->xUnlock(real(x), l);
      };
      methods().xCheckReservedLock = [](sqlite3_file* x, int* r) {
        return real(x)->pMethods->xCheckReservedLock(real(x), r);
      };
      methods().xFileControl = [](sqlite3_file* x, int op, void* a) {
        return real(x)->pMethods->xFileControl(real(x), op, a);
      };
      methods().xSectorSize = [](sqlite3_file* x) {
        return real(x)->pMethods->xSectorSize(real(x));
      };
      methods().xDeviceCharacteristics = [](sqlite3_file* x) {
        return real(x)->pMethods->xDeviceCharacteristics(real(x));
      };
      methods().xShmMap = [](sqlite3_file* x, int pg, int sz, int ext,
                             void volatile** p) {
        return real(x)->pMethods->xShmMap(real(x), pg, sz, ext, p);
      };
      methods().xShmLock = [](sqlite3_file* x, int off, int n, int fl) {
        return real(x)->pMethods->xShmLock(real(x), off, n, fl);
      };
      methods().xShmBarrier = [](sqlite3_file* x) {
        real(x)->pMethods->xShmBarrier(real(x));
      };
      methods().xShmUnmap = [](sqlite3_file* x, int del) {
        return real(x)->pMethods->xShmUnmap(real(x), del);
      };
      methods().xFetch = [](sqlite3_file* x, sqlite3_int64 o, int n, void** p) {
        return real(x)->pMethods->xFetch(real(x), o, n, p);
      };
      methods().xUnfetch = [](sqlite3_file* x, sqlite3_int64 o, void* p) {
        return real(x)->pMethods->xUnfetch(real(x), o, p);
      };
      methods().iVersion = m->iVersion < 3 ? m->iVersion : 3;
    }
    ours->base.pMethods = &methods();
    return SQLITE_OK;
  }

  static sqlite3_io_methods& methods() {
    static sqlite3_io_methods m{};
    return m;
  }

  sqlite3_vfs* base_ = nullptr;
  sqlite3_vfs vfs_{};
  std::atomic<bool> failing_{false};
  std::atomic<uint64_t> injected_{0};
};

} // namespace disk_faults
