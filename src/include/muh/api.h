/*
 * api.h — the declaration wrappers of libmuh's internal headers.
 *
 * The headers in src/include/muh/ are libmuh's internals: the CLI and the
 * tests link the static library and use them freely, but nothing here
 * leaves the shared library. What an embedding program sees is
 * include/muh/libmuh.h alone (muh_ names, opaque handles, one muh_status);
 * src/libmuh.map exports exactly that, and -fvisibility=hidden hides the
 * rest from the objects already. MUH_BEGIN_DECLS / MUH_END_DECLS keep the
 * internal headers includable from C++ (a test or a tool may be C++).
 */
#ifndef MUH_API_H
#define MUH_API_H

#ifdef __cplusplus
#define MUH_BEGIN_DECLS extern "C" {
#define MUH_END_DECLS }
#else
#define MUH_BEGIN_DECLS
#define MUH_END_DECLS
#endif

#endif
