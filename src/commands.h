/* One function per command, dispatched from main.c. */
#ifndef TA_COMMANDS_H
#define TA_COMMANDS_H

int cmd_temporal(int argc, char **argv);
int cmd_idle(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_overlap(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_membw(int argc, char **argv);
int cmd_annotations(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_stragglers(int argc, char **argv);
int cmd_critical(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_steps(int argc, char **argv);
int cmd_counters(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_schema(int argc, char **argv);

#endif
