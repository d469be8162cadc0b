//! The kernel names an export holds, for the error when the one asked for is absent: all
//! of them when there are a few, else the closest.

use energy_results::echo;

/// How many kernel names an error lists in full; past it, the closest few and the count.
const NAMES_LISTED: usize = 8;

/// "no launch of `wanted`", with the export's kernel names: all of them when there are a
/// few, else the [`NAMES_LISTED`] closest to `wanted` (edit distance) and how many there are.
pub(super) fn no_launch_of(wanted: &str, names: &[(String, usize)]) -> String {
    let launches: usize = names.iter().map(|n| n.1).sum();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    // A long demangled name is cut by `echo`: its short name (what `--kernel` takes) first.
    let counted = |(name, n): &(String, usize)| {
        let short = super::short_kernel_name(name);
        let shown =
            if short == name { format!("`{}`", echo(name)) } else { format!("`{}` = `{}`", echo(short), echo(name)) };
        if *n == 1 {
            shown
        } else {
            format!("{shown} ({n} launches)")
        }
    };
    let head = format!(
        "no launch of `{}` among its {} of {}",
        echo(wanted),
        plural(launches, "launch", "launches"),
        plural(names.len(), "kernel", "kernels")
    );
    if names.len() <= NAMES_LISTED {
        let all: Vec<String> = names.iter().map(counted).collect();
        return format!(
            "{head}: {}; name one of them (or its short name: no `void`, template arguments or signature)",
            all.join(", ")
        );
    }
    // Closest first: a name holding the one asked for (or held by it), then the fewest
    // edits, then the longest common subsequence (`k_4242x` is nearer `k_04242` than
    // `k_02420`, two edits from both); names compared in lower case, on 64 characters.
    let key = |s: &str| s.chars().take(64).flat_map(char::to_lowercase).collect::<Vec<char>>();
    let target = key(wanted);
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(Closeness, &(String, usize))> = names
        .iter()
        .map(|n| {
            let base = super::short_kernel_name(&n.0);
            let (name, base_key) = (key(&n.0), key(base));
            let lower = n.0.to_lowercase();
            let holds =
                lower.contains(&wanted_lower) || (!base.is_empty() && wanted_lower.contains(&base.to_lowercase()));
            let edits = edit_distance(&target, &base_key).min(edit_distance(&target, &name));
            let common = common_subsequence(&target, &base_key).max(common_subsequence(&target, &name));
            ((!holds, edits, std::cmp::Reverse(common)), n)
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1 .0.cmp(&b.1 .0)));
    let closest: Vec<String> = scored.iter().take(NAMES_LISTED).map(|(_, n)| counted(n)).collect();
    format!(
        "{head}; the closest names: {} ({} more); name one of them (or its short name: no `void`, template arguments or signature)",
        closest.join(", "),
        names.len() - closest.len()
    )
}

/// How close a name is to the one asked for, closest first: not holding it (false first),
/// edits, longest common subsequence (longest first).
type Closeness = (bool, usize, std::cmp::Reverse<usize>);

/// The length of the longest common subsequence of `a` and `b`.
fn common_subsequence(a: &[char], b: &[char]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for ca in a {
        let mut diagonal = 0;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb { diagonal + 1 } else { above.max(row[j]) };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Levenshtein distance.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}
