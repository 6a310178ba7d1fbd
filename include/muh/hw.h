/*
 * hw.h — hardware profiles: named limits and rates of a device, each marked
 * measured (read from the device through the driver) or declared (written in
 * a built-in table or a YAML file, and therefore an assumption).
 *
 * Constraints read a profile as hw.<key>, e.g. hw.smem_per_block. The keys
 * are fixed (HW_KEYS in hw.c); a profile need not have all of them, and a
 * constraint that reads a key the profile lacks is an input error that names
 * the keys that exist.
 *
 * libcuda.so.1 is loaded at run time with dlopen: the same binary serves
 * machines with and without a GPU.
 */
#ifndef MUH_HW_H
#define MUH_HW_H

#include "muh/diag.h"

#define HW_MAX_FIELDS 40
#define HW_NAME 96

enum hw_origin { HW_DECLARED = 0, HW_MEASURED = 1 };

typedef struct muh_hw_field {
	const char *key; /* one of the fixed keys (static storage) */
	double value;
	enum hw_origin origin;
	char note[160]; /* why, for declared values that are disputed; may be "" */
} muh_hw_field;

typedef struct muh_hw {
	char name[HW_NAME];    /* "h200", "bi-v100", or the device's own name */
	char source[HW_NAME];  /* "built-in", "device 0", or the YAML path */
	int nfields;
	muh_hw_field f[HW_MAX_FIELDS];
} muh_hw;

/* The fixed keys, NULL-terminated, in print order. */
extern const char *const hw_keys[];
/* One-line description of a key, for muh hw and for errors. */
const char *hw_key_doc(const char *key);

/* Names of the built-in profiles, NULL-terminated. */
extern const char *const hw_builtin_names[];

/* Fills *hw with the built-in profile name. MUH_EINPUT (and d says which
 * names exist) when there is none. */
int hw_builtin(const char *name, muh_hw *hw, muh_diag *d);

/* Reads a profile from a YAML file: name, and key: value or
 * key: {value: V, origin: measured|declared, note: "..."}. */
int hw_load_file(const char *path, muh_hw *hw, muh_diag *d);

/* Resolves a reference as written in a spec or on the command line: a
 * built-in name, "device" (query device 0), or a path to a YAML file. */
int hw_resolve(const char *ref, muh_hw *hw, muh_diag *d);

/* Queries device ordinal dev through the CUDA driver API, loaded at run time.
 * Every value it sets is HW_MEASURED. Returns MUH_EENV with a message in
 * d->msg when there is no driver or no device. */
int hw_query_device(int dev, muh_hw *hw, muh_diag *d);

/* The number of CUDA devices this process sees (CUDA_VISIBLE_DEVICES
 * applies), through the driver loaded at run time. MUH_EENV with d->msg
 * ("no CUDA device: ...") when there is no driver. */
int hw_device_count(int *count, muh_diag *d);

/* Looks a key up. Returns 1 and sets *v when present, else 0. */
int hw_get(const muh_hw *hw, const char *key, double *v);
const muh_hw_field *hw_field(const muh_hw *hw, const char *key);

/* Sets (or adds) a key. Returns MUH_EINPUT for a key that is not one of
 * hw_keys. */
int hw_set(muh_hw *hw, const char *key, double v, enum hw_origin origin, const char *note);

#endif
