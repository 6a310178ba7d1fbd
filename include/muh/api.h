/*
 * api.h — how libmuh's public headers mark their API.
 *
 * libmuh is built with -fvisibility=hidden: only the declarations marked
 * MUH_API leave the shared library, so internals (src/NAME_int.h) stay
 * internal whatever their names. MUH_BEGIN_DECLS / MUH_END_DECLS let C++
 * include every header.
 */
#ifndef MUH_API_H
#define MUH_API_H

#if defined(__GNUC__) || defined(__clang__)
#define MUH_API __attribute__((visibility("default")))
#else
#define MUH_API
#endif

#ifdef __cplusplus
#define MUH_BEGIN_DECLS extern "C" {
#define MUH_END_DECLS }
#else
#define MUH_BEGIN_DECLS
#define MUH_END_DECLS
#endif

#endif
