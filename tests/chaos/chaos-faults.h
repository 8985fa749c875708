/* chaos-faults.h - what the chaos test does to its cluster, one fault at a
 * time: each a function of a table, held its time and then undone. */
#ifndef TRIAGE_CHAOS_FAULTS_H
#define TRIAGE_CHAOS_FAULTS_H

#include <stddef.h>

struct chaos_cluster;

struct chaos_fault {
	const char	*key;		/* for CHAOS_FAULTS */
	const char	*name;
	/* Acts on node (each fault of a round on another node), or on the
	 * database, which ignores it; returns once the fault is over (a
	 * node restarted, continued, healed; a server back). */
	void		(*run)(struct chaos_cluster *cc, unsigned node,
			    unsigned seed);
	int		 on_node;	/* node names the one it acts on */
};

/* Every fault, in the order of a round. */
extern const struct chaos_fault chaos_faults[];
extern const size_t chaos_nfaults;

#endif
