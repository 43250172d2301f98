/* Writes values the way the profiler prints shapes: "[[4, 256], []]". */
#include "jsoncap.h"

#include <string.h>

void ta_jsoncap_reset(struct ta_jsoncap *c)
{
	ta_buf_reset(&c->out);
	ta_buf_reset(&c->first);
	c->after_key = 0;
	c->overflow = 0;
}

static int room(struct ta_jsoncap *c, size_t n)
{
	if (c->out.len + n > TA_JSONCAP_MAX)
		c->overflow = 1;
	return !c->overflow;
}

/* Separator before a new item of the innermost container. */
static void item(struct ta_jsoncap *c)
{
	if (c->after_key) {
		c->after_key = 0;
		return;
	}
	if (c->first.len == 0)
		return;
	if (c->first.s[c->first.len - 1] == '1')
		c->first.s[c->first.len - 1] = '0';
	else if (room(c, 2))
		ta_buf_add(&c->out, ", ", 2);
}

void ta_jsoncap_open(struct ta_jsoncap *c, char bracket)
{
	item(c);
	ta_buf_addc(&c->first, '1');
	if (room(c, 1))
		ta_buf_addc(&c->out, bracket);
}

void ta_jsoncap_close(struct ta_jsoncap *c, char bracket)
{
	if (c->first.len)
		c->first.s[--c->first.len] = '\0';
	if (room(c, 1))
		ta_buf_addc(&c->out, bracket);
}

static void quoted(struct ta_jsoncap *c, const char *s, size_t len)
{
	size_t i;

	if (!room(c, len + 2))
		return;
	ta_buf_addc(&c->out, '"');
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\') {
			ta_buf_addc(&c->out, '\\');
			ta_buf_addc(&c->out, (char)ch);
		} else if (ch < 0x20) {
			ta_buf_addf(&c->out, "\\u%04x", ch);
		} else {
			ta_buf_addc(&c->out, (char)ch);
		}
	}
	ta_buf_addc(&c->out, '"');
}

void ta_jsoncap_key(struct ta_jsoncap *c, const char *s, size_t len)
{
	item(c);
	quoted(c, s, len);
	if (room(c, 2))
		ta_buf_add(&c->out, ": ", 2);
	c->after_key = 1;
}

void ta_jsoncap_string(struct ta_jsoncap *c, const char *s, size_t len)
{
	item(c);
	quoted(c, s, len);
}

void ta_jsoncap_raw(struct ta_jsoncap *c, const char *s, size_t len)
{
	item(c);
	if (room(c, len))
		ta_buf_add(&c->out, s, len);
}

void ta_jsoncap_free(struct ta_jsoncap *c)
{
	ta_buf_free(&c->out);
	ta_buf_free(&c->first);
}
