#!/bin/sh
# The architecture, checked: files -> parse -> SQLite -> model -> analyses
# -> report, one way. Each rule is a grep that must find nothing.
SUITE=layers
. "$(dirname "$0")/lib.sh"

none() { # NAME PATTERN PLANTED FILES...: grep -E finds nothing in FILES,
	# and finds PLANTED (a line that breaks the rule)
	name=$1 pat=$2; caught "$1" "$2" "$3"; shift 3
	if grep -nE "$pat" "$@"; then
		fail=$((fail + 1)); echo "FAIL $SUITE: $name"
	else
		pass=$((pass + 1))
	fi
}

# and each rule, shown a planted violation, must find it
caught() { # NAME PATTERN LINE: the rule finds LINE
	printf '%s\n' "$3" > "$TMP/planted.c"
	if grep -qE "$2" "$TMP/planted.c"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL $SUITE: $1 misses the planted '$3'"
	fi
}

A="src/analyses/*/*.c src/analyses/*/*.h"
# analyses read the model's views, never the parser's tables or HTA's rows
# (the table in SQL: words such as "events" in names and text are fine)
none analyses_read_the_model '(FROM|JOIN|INTO|UPDATE|TABLE)[[:space:]"]+(main\.)?events([^a-z_]|$)|hrows' ' "SELECT ts FROM events WHERE rank = ?"' $A
# nor the parser's names and files tables: the model's label and inputs
# views (a SQL keyword, then the table, possibly across a line break)
none analyses_read_labels '(FROM|JOIN)[[:space:]"]+(main\.)?(names|files|meta)([^a-z_]|$)|^[[:space:]]*" *(names|files|meta) [a-z]*( |")' '			  " names n ON n.name_id = e.name"' $A
# roles and kinds are named (ta_db.h, ta_model.h), never numbers in SQL
none no_literal_roles "role *(=|!=|<>) *[0-9]|role +IN *\\( *[0-9]" '" WHERE role = 4"' $A src/model/*.c
none no_literal_kinds "kind *(=|!=|<>) *[0-9]|kind +IN *\\( *[0-9]" '" AND kind IN (1, 2)"' $A src/model/*.c
# Kineto's category strings are decoded in the model (TA_CAT_*, ta_model.h)
none no_kineto_categories_in_analyses "'(cpu_op|cuda_runtime|cuda_driver|user_annotation|gpu_user_annotation|python_function|kernel|gpu_memcpy|gpu_memset|ac2g)'" "	\" AND c.name = 'cpu_op'\"" $A
# one list of GPU categories (ta_db.h)
none one_gpu_category_list "'Kernel', 'gpu_memcpy'|\"Kernel\", \"gpu_memcpy\"" "\"cat IN ('Kernel', 'gpu_memcpy')\"" src/parse/*.c src/model/*.c $A
# analyses ask the model's rules (ta_rules), never which mode runs; HTA's
# own algorithms live in src/compat/hta/; the model's own code asks its
# rules too (rules.c alone maps a mode to them)
# (declaring what a mode means to a command, [TA_MODE_HTA] = ..., is fine)
none no_mode_in_analyses "hta_compat|[=!]= *TA_MODE_|->mode([^_a-z]|$)|\\.mode([^_a-z]|$)" '	if (q->mode == TA_MODE_HTA)' $A
none no_mode_in_model "hta_compat|[=!]= *TA_MODE_|->mode([^_a-z]|$)" '	return q->mode ? hta_sql : sql;' $(ls src/model/*.c | grep -v rules.c)
# commands declare and present; what they need from a database the model
# answers (facts.c): no SQL in src/commands/cmd_*.c
none no_sql_in_commands '"(SELECT|INSERT|UPDATE|DELETE|CREATE) |sqlite3_(prepare|step|exec)|ta_db_(prepare|int|text|exec)\(' '	n = ta_db_int(db, "SELECT count(*) FROM sel_ranks", 0);' src/commands/cmd_*.c
# every mode's row of rules sets every rule (0 is a choice, not a default)
rules_complete() { # FILE: each row in FILE sets as many fields as the struct has
	n=$(sed -n '/^struct ta_rules {/,/^};/p' include/ta_model.h | grep -c '^	int ')
	awk -v n="$n" '/^static const struct ta_rules [a-z_]+ = \{/ { on = 1; k = 0 }
		on { k += gsub(/\.[a-z_]+ = [01]/, "") }
		on && /^};/ { on = 0; if (k != n) bad = 1 }
		END { exit bad }' "$1"
}
sed 's/\.notes = 1, //' src/model/rules.c > "$TMP/rules.c"
if rules_complete src/model/rules.c && ! rules_complete "$TMP/rules.c"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1)); echo "FAIL $SUITE: a row of src/model/rules.c leaves a rule out (or the check misses one)"
fi
# the parser and the model never format output; analyses never write it
none parse_does_not_print "ta_report\\.h|(^|[^a-z_])(f?printf|fputs|puts|fwrite)\\(" '	printf("%d\\n", n);' src/parse/*.c src/model/*.c
none analyses_do_not_print "ta_report\\.h|ta_stream|(^|[^a-z_])(f?printf|fputs|puts|fwrite)\\(" '	fputs(line, stderr);' $A
# presentation lives in src/report/: analyses return the same rows for
# every format
none no_presentation_in_analyses "for_people|->head|->tail" '	t->head = note;' $A include/ta_analyses.h
finish

