# bash completion for traceanalyze: commands, options, and column names
# after --fail-if / --max-increase. Source it, or install it as
# /usr/share/bash-completion/completions/traceanalyze.

_traceanalyze_columns()
{
	case "$1" in
	temporal) echo rank idle_us compute_us non_compute_us kernel_us idle_pct compute_pct non_compute_pct ;;
	idle) echo rank stream category idle_us idle_ratio count mean_us std_us min_us p25_us p50_us p75_us max_us ;;
	kernels) echo rank kernel_type name count total_us max_us min_us std_us mean_us pct ;;
	overlap) echo rank comm_us compute_us overlap_us overlap_pct ;;
	launch) echo rank correlation kernel cpu_us gpu_us launch_delay_us api launches short_kernels short_pct runtime_outliers runtime_outlier_pct delay_outliers delay_outlier_pct ;;
	queue) echo rank stream count mean std min p25 p50 p75 max blocked_us blocked_ratio ;;
	membw) echo rank name count mean_gbps std_gbps min_gbps p25_gbps p50_gbps p75_gbps max_gbps ;;
	annotations) echo rank name count total_us max_us min_us std_us mean_us ;;
	ops) echo rank name calls self_cpu_us cpu_us self_device_us device_us input_shapes stack ;;
	diagnose) echo rank step step_us gpu_busy_pct verdict main_cause cause_us kind cost_us count where advice ;;
	esac
}

_traceanalyze()
{
	local cur prev cmd opts
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	local commands="report temporal idle kernels overlap launch queue membw annotations ops diagnose ingest schema help"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	case "$prev" in
	--fail-if|--max-increase)
		COMPREPLY=($(compgen -W "$(_traceanalyze_columns "$cmd")" -- "${cur#[\'\"]}"))
		return ;;
	--format) COMPREPLY=($(compgen -W "text csv json" -- "$cur")); return ;;
	--by) COMPREPLY=($(compgen -W "kernel type" -- "$cur")); return ;;
	--baseline|-o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
	esac
	if [[ "$cur" == -* ]]; then
		opts=$(traceanalyze "$cmd" --help 2>/dev/null | grep -o -- '--[a-z-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _traceanalyze traceanalyze
