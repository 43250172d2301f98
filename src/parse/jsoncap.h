/* Re-serialises a nested JSON value (input shapes, metadata) as compact
 * text while yajl streams it, with a size cap to keep memory bounded. */
#ifndef TA_JSONCAP_H
#define TA_JSONCAP_H

#include "ta.h"

#define TA_JSONCAP_MAX (16u << 20)

struct ta_jsoncap {
	struct ta_buf out;
	struct ta_buf first;  /* per open container: 1 until an item is written */
	int after_key;
	int overflow;
};

void ta_jsoncap_reset(struct ta_jsoncap *c);
void ta_jsoncap_open(struct ta_jsoncap *c, char bracket);
void ta_jsoncap_close(struct ta_jsoncap *c, char bracket);
void ta_jsoncap_key(struct ta_jsoncap *c, const char *s, size_t len);
void ta_jsoncap_string(struct ta_jsoncap *c, const char *s, size_t len);
void ta_jsoncap_raw(struct ta_jsoncap *c, const char *s, size_t len);
void ta_jsoncap_free(struct ta_jsoncap *c);

#endif
