// SPDX-License-Identifier: Apache-2.0
#pragma once

// Declarations of keylane's public types, so headers can include little.

namespace keylane {

class key;
class handler_base;
class handler_registry;
class handler_params;
class submit_result;
struct settings;
struct stats;
struct stop_report;

template <class Payload, class Result>
struct event;

template <class Payload, class Result>
class handler;

template <class Result>
class completion;

template <class Payload, class Result>
class runtime;

namespace detail {

struct event_base;
class engine;
class lane;
class supervisor;
class sink;

} // namespace detail

} // namespace keylane
