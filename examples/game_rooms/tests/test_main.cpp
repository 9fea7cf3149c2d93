// SPDX-License-Identifier: Apache-2.0
// Catch2's main for game_rooms_tests: the rules of the game server that
// need no server (its wire format, its ids).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
