// The throwing family (throwing_plugin.hpp) as a plugin, loaded with dlopen by the edge's test.
#include "throwing_plugin.hpp"

GPUK_PLUGIN("throwing", gpuk::test::ThrowingPlugin)
