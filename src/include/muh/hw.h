/*
 * hw.h — hardware profiles: named limits and rates of a device, each marked
 * measured (read from the device through the driver) or declared (written in
 * a built-in table or a YAML file, and therefore an assumption).
 *
 * Constraints read a profile as hw.<key>, e.g. hw.smem_per_block or
 * num_warps * hw.warp_size (threads per block). The keys are fixed (hw_keys
 * in hw.c); a profile need not have all of them. A key a profile lacks is
 * unknown: never a guess, never zero. A profile may say why a key is
 * unknown (hw_unknown: "not public"); a constraint that reads an unknown key
 * is an input error that says so.
 *
 * A declared value carries where it comes from (source: a document, a file
 * of the engine, a measurement elsewhere) and when (date), so that a reader
 * can judge it. Notes and sources are kept whole (HW_NOTE bytes; a longer
 * one in a profile file is an input error, never cut).
 *
 * libcuda.so.1 is loaded at run time with dlopen: the same binary serves
 * machines with and without a GPU.
 */
#ifndef MUH_HW_H
#define MUH_HW_H

#include "muh/diag.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

#define HW_MAX_FIELDS 40
#define HW_MAX_UNKNOWN 16
#define HW_NAME 96
#define HW_NOTE 512
#define HW_DATE 32

enum hw_origin { HW_DECLARED = 0, HW_MEASURED = 1 };

typedef struct muh_hw_field {
	const char *key; /* one of the fixed keys (static storage) */
	double value;    /* NAN in an unknown entry */
	enum hw_origin origin;
	char source[HW_NOTE]; /* where a declared value comes from; may be "" */
	char date[HW_DATE];   /* when: of the source, or of the measurement; may be "" */
	char note[HW_NOTE];   /* why, for values that are disputed; may be "" */
} muh_hw_field;

typedef struct muh_hw {
	char name[HW_NAME];    /* "h200", "bi-v100", or the device's own name */
	char source[HW_NAME];  /* "built-in", "device 0", or the YAML path */
	char device[HW_NAME];  /* the name the device reports to engines (vLLM's
				  device_name, e.g. "NVIDIA H200"); "" unknown */
	int nfields;
	muh_hw_field f[HW_MAX_FIELDS];
	int nunknown; /* keys the profile says are unknown, with why (u[i].note) */
	muh_hw_field u[HW_MAX_UNKNOWN];
} muh_hw;

/* The fixed keys, NULL-terminated, in print order. */
extern const char *const hw_keys[];
/* What key is, in a few words, without its unit ("shared memory per block
 * with opt-in"); NULL when key is not one of hw_keys. */
const char *hw_key_doc(const char *key);
/* The unit of key's values, the one muh prints them in: "bytes" for
 * smem_per_block_optin, "kHz", "GB/s", ...; "" for a count or a code
 * (max_threads_per_block, sm_count, cc: the meaning says what is
 * counted); NULL when key is not one of hw_keys. */
const char *hw_key_unit(const char *key);

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
 * hw_keys. Clears the key's source and date, and its unknown entry. */
int hw_set(muh_hw *hw, const char *key, double v, enum hw_origin origin, const char *note);

/* Sets where key's value comes from and when (either may be NULL). MUH_EINPUT
 * when the profile has no value for key. */
int hw_set_source(muh_hw *hw, const char *key, const char *source, const char *date);

/* Marks key unknown, with why (may be NULL), dropping any value it had.
 * MUH_EINPUT for a key that is not one of hw_keys. */
int hw_set_unknown(muh_hw *hw, const char *key, const char *why);

/* The unknown entry of key (why in ->note), or NULL when the profile does
 * not say key is unknown (it may still lack a value: hw_field is NULL). */
const muh_hw_field *hw_unknown(const muh_hw *hw, const char *key);

/* muh hw's output (hw_text.c), on a textout's result stream: a profile
 * (name, source, device, each known key with its value, origin, meaning,
 * source and note, then the keys it does not know), or as one JSON object
 * {name, source, device, fields, unknown}; and the built-in profiles' names
 * with their descriptions (json: a JSON list of the names). */
void hw_text_profile(const textout *out, const muh_hw *hw, int json);
void hw_text_list(const textout *out, int json);

/* When d says "unknown name 'hw.KEY'..." for a KEY of hw_keys that hw has no
 * value for, rewrites the message to say that hw (by name) does not know
 * KEY, and why when the profile says; keeps d's place. Else leaves d. */
void hw_explain_unknown(const muh_hw *hw, muh_diag *d);

/* The built-in profile whose name or device name is dev (case, spaces and
 * underscores aside): "h200", "NVIDIA H200" and "NVIDIA_H200" are one.
 * Returns its name, or NULL. */
const char *hw_builtin_for_device(const char *dev);

/* 1 when a and b name the same device: equal as names (case, spaces and
 * underscores aside), or one is a built-in profile and the other its
 * device name. */
int hw_same_device(const char *a, const char *b);

MUH_END_DECLS

#endif
