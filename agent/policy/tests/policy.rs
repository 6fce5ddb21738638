//! The seed's policy tests (`fs-observation-policy/tests/policy.spec.ts`), through the
//! contract's `Gate` hooks, plus the ones the Rust shape adds: owner handles freeing their
//! state when dropped, and invalid events.

use seam::{
    Actor, FsErrorCode, FsObservation, FsTarget, FsTargetKey, FsVersion, Gate, WriteIntent,
};
use seam_policy::{ObservationPolicy, Observed, Owner};

fn target(name: &str) -> FsTarget {
    FsTarget {
        key: FsTargetKey::new(format!("/real/{name}")),
        display_path: format!("/work/{name}"),
    }
}

fn present(v: &str) -> FsObservation {
    FsObservation::Present {
        version: FsVersion::new(v),
    }
}

fn replace(v: &str) -> Option<WriteIntent> {
    Some(WriteIntent::ReplaceIfVersion {
        version: FsVersion::new(v),
    })
}

/// An actor that carries something, but not an owner (the seed's `{}` / agent without session).
struct NotAnOwner;

// ---- write-intent ----

#[tokio::test]
async fn an_unobserved_target_decides_create_if_absent() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    assert_eq!(
        p.write_intent(&target("a"), Some(&o)).await,
        Ok(Some(WriteIntent::CreateIfAbsent))
    );
}

#[tokio::test]
async fn a_no_owner_actor_decides_create_if_absent() {
    let p = ObservationPolicy::new();
    let t = target("a");
    let stranger: &Actor = &NotAnOwner;
    for actor in [None, Some(stranger), Some(&() as &Actor)] {
        assert_eq!(
            p.write_intent(&t, actor).await,
            Ok(Some(WriteIntent::CreateIfAbsent))
        );
    }
}

#[tokio::test]
async fn an_observed_target_decides_replace_if_version_at_the_observed_version() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let t = target("a");
    p.observed(&t, &present("v1"), Some(&o));
    assert_eq!(p.write_intent(&t, Some(&o)).await, Ok(replace("v1")));
}

#[tokio::test]
async fn a_target_observed_absent_decides_create_if_absent() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let t = target("a");
    p.observed(&t, &FsObservation::Absent, Some(&o));
    assert_eq!(p.observation(&o, &t.key), Observed::Absent);
    assert_eq!(
        p.write_intent(&t, Some(&o)).await,
        Ok(Some(WriteIntent::CreateIfAbsent))
    );
}

// ---- edit-intent ----

#[tokio::test]
async fn rejects_an_unread_edit_with_fs_not_observed() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let err = p
        .edit_intent(&target("a"), Some(&o))
        .await
        .expect_err("unread");
    assert_eq!(err.code(), FsErrorCode::NotObserved);
    assert_eq!(err.message(), "edit requires reading \"/work/a\" first");
}

#[tokio::test]
async fn rejects_an_edit_with_no_owner_even_after_a_no_owner_observation() {
    let p = ObservationPolicy::new();
    let t = target("a");
    let stranger: &Actor = &NotAnOwner;
    for actor in [None, Some(stranger)] {
        p.observed(&t, &present("v1"), actor);
        let err = p.edit_intent(&t, actor).await.expect_err("no owner");
        assert_eq!(err.code(), FsErrorCode::NotObserved);
        assert_eq!(err.message(), "edit requires reading \"/work/a\" first");
    }
    // ... and a no-owner observation recorded nothing at all.
    assert_eq!(p.owner_count(), 0);
}

#[tokio::test]
async fn returns_the_observed_version_as_the_cas_basis_after_an_observation() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let t = target("a");
    p.observed(&t, &present("v7"), Some(&o));
    assert_eq!(
        p.edit_intent(&t, Some(&o)).await,
        Ok(Some(FsVersion::new("v7")))
    );
}

#[tokio::test]
async fn rejects_editing_a_target_observed_absent_with_fs_not_found() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let t = target("a");
    p.observed(&t, &FsObservation::Absent, Some(&o));
    let err = p.edit_intent(&t, Some(&o)).await.expect_err("absent");
    assert_eq!(err.code(), FsErrorCode::NotFound);
    assert_eq!(err.message(), "cannot edit \"/work/a\": not found");
}

// ---- state ----

#[tokio::test]
async fn a_write_or_edit_observation_refreshes_the_basis_so_the_next_edit_needs_no_reread() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let t = target("a");
    p.observed(&t, &present("read"), Some(&o));
    // The tool reports its own mutation's version.
    p.observed(&t, &present("after-write"), Some(&o));
    assert_eq!(
        p.edit_intent(&t, Some(&o)).await,
        Ok(Some(FsVersion::new("after-write")))
    );
    p.observed(&t, &present("after-edit"), Some(&o));
    assert_eq!(
        p.write_intent(&t, Some(&o)).await,
        Ok(replace("after-edit"))
    );
}

#[tokio::test]
async fn supports_present_absent_present_transitions_for_one_owner() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let t = target("a");
    p.observed(&t, &present("v1"), Some(&o));
    assert_eq!(
        p.observation(&o, &t.key),
        Observed::Present(FsVersion::new("v1"))
    );
    p.observed(&t, &FsObservation::Absent, Some(&o));
    assert_eq!(p.observation(&o, &t.key), Observed::Absent);
    assert_eq!(
        p.edit_intent(&t, Some(&o)).await.map_err(|e| e.code()),
        Err(FsErrorCode::NotFound)
    );
    p.observed(&t, &present("v2"), Some(&o));
    assert_eq!(p.write_intent(&t, Some(&o)).await, Ok(replace("v2")));
}

#[tokio::test]
async fn observations_are_per_key() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    p.observed(&target("a"), &present("va"), Some(&o));
    assert_eq!(
        p.write_intent(&target("b"), Some(&o)).await,
        Ok(Some(WriteIntent::CreateIfAbsent))
    );
}

// ---- isolation ----

#[tokio::test]
async fn owner_a_observing_does_not_grant_owner_b_edit_authority() {
    let p = ObservationPolicy::new();
    let (a, b) = (Owner::new(), Owner::new());
    let t = target("a");
    p.observed(&t, &present("v1"), Some(&a));
    let err = p.edit_intent(&t, Some(&b)).await.expect_err("b never read");
    assert_eq!(err.code(), FsErrorCode::NotObserved);
    assert_eq!(
        p.write_intent(&t, Some(&b)).await,
        Ok(Some(WriteIntent::CreateIfAbsent))
    );
}

#[tokio::test]
async fn each_owner_records_its_own_observed_version_independently() {
    let p = ObservationPolicy::new();
    let (a, b) = (Owner::new(), Owner::new());
    let t = target("a");
    p.observed(&t, &present("v1"), Some(&a));
    p.observed(&t, &present("v2"), Some(&b));
    assert_eq!(
        p.edit_intent(&t, Some(&a)).await,
        Ok(Some(FsVersion::new("v1")))
    );
    assert_eq!(
        p.edit_intent(&t, Some(&b)).await,
        Ok(Some(FsVersion::new("v2")))
    );
    p.observed(&t, &FsObservation::Absent, Some(&b));
    assert_eq!(
        p.edit_intent(&t, Some(&a)).await,
        Ok(Some(FsVersion::new("v1")))
    );
}

#[tokio::test]
async fn clones_of_an_owner_are_the_same_owner() {
    let p = ObservationPolicy::new();
    let a = Owner::new();
    let a2 = a.clone();
    let t = target("a");
    p.observed(&t, &present("v1"), Some(&a));
    assert_eq!(
        p.edit_intent(&t, Some(&a2)).await,
        Ok(Some(FsVersion::new("v1")))
    );
    assert_eq!(a, a2);
    assert_ne!(a, Owner::new());
}

// ---- lifetime (the seed's WeakMap and disposal) ----

#[tokio::test]
async fn a_dropped_owner_frees_its_state() {
    let p = ObservationPolicy::new();
    let keep = Owner::new();
    let gone = Owner::new();
    let clone = gone.clone();
    p.observed(&target("a"), &present("v1"), Some(&keep));
    p.observed(&target("a"), &present("v1"), Some(&gone));
    p.observed(&target("b"), &FsObservation::Absent, Some(&gone));
    assert_eq!(p.owner_count(), 2);
    drop(gone);
    assert_eq!(p.owner_count(), 2, "a live clone keeps the owner");
    drop(clone);
    assert_eq!(
        p.owner_count(),
        1,
        "the last handle frees the owner's state"
    );
    assert_eq!(
        p.observation(&keep, &target("a").key),
        Observed::Present(FsVersion::new("v1"))
    );
}

#[tokio::test]
async fn a_dropped_owner_is_forgotten_by_every_policy_that_knew_it() {
    let (p, q) = (ObservationPolicy::new(), ObservationPolicy::new());
    let o = Owner::new();
    p.observed(&target("a"), &present("v1"), Some(&o));
    q.observed(&target("a"), &present("v1"), Some(&o));
    // An owner that outlives a policy is fine too.
    let r = ObservationPolicy::new();
    r.observed(&target("a"), &present("v1"), Some(&o));
    drop(r);
    assert_eq!((p.owner_count(), q.owner_count()), (1, 1));
    drop(o);
    assert_eq!((p.owner_count(), q.owner_count()), (0, 0));
}

#[tokio::test]
async fn a_fresh_policy_starts_with_no_inherited_state() {
    let o = Owner::new();
    let t = target("a");
    let first = ObservationPolicy::new();
    first.observed(&t, &present("v1"), Some(&o));
    drop(first);
    let second = ObservationPolicy::new();
    assert_eq!(second.owner_count(), 0);
    assert_eq!(
        second.edit_intent(&t, Some(&o)).await.map_err(|e| e.code()),
        Err(FsErrorCode::NotObserved)
    );
}

#[tokio::test]
async fn clones_of_a_policy_share_one_table() {
    let p = ObservationPolicy::new();
    let p2 = p.clone();
    let o = Owner::new();
    p.observed(&target("a"), &present("v1"), Some(&o));
    assert_eq!(
        p2.edit_intent(&target("a"), Some(&o)).await,
        Ok(Some(FsVersion::new("v1")))
    );
}

// ---- invalid events (the seed's invariant companion) ----

#[tokio::test]
async fn events_with_empty_identities_are_refused_and_never_recorded() {
    let p = ObservationPolicy::new();
    let o = Owner::new();
    let no_key = FsTarget {
        key: FsTargetKey::new(""),
        display_path: "/work/a".into(),
    };
    let no_display = FsTarget {
        key: FsTargetKey::new("/real/a"),
        display_path: String::new(),
    };
    let err = p
        .write_intent(&no_key, Some(&o))
        .await
        .expect_err("empty key");
    assert_eq!(
        err.message(),
        "filesystem event targetKey must be non-empty"
    );
    let err = p
        .edit_intent(&no_display, Some(&o))
        .await
        .expect_err("empty display");
    assert_eq!(
        err.message(),
        "filesystem event displayPath must be non-empty"
    );
    p.observed(&no_key, &present("v1"), Some(&o));
    p.observed(&target("a"), &present(""), Some(&o));
    assert_eq!(p.owner_count(), 0);
    assert_eq!(p.observation(&o, &target("a").key), Observed::Unseen);
}

// ---- concurrency: the table is shared across threads ----

#[test]
fn owners_on_many_threads_keep_their_own_state() {
    let p = ObservationPolicy::new();
    std::thread::scope(|s| {
        for i in 0..8 {
            let p = p.clone();
            s.spawn(move || {
                let o = Owner::new();
                for j in 0..200 {
                    p.observed(
                        &target(&format!("f{j}")),
                        &present(&format!("{i}-{j}")),
                        Some(&o),
                    );
                }
                for j in 0..200 {
                    assert_eq!(
                        p.observation(&o, &target(&format!("f{j}")).key),
                        Observed::Present(FsVersion::new(format!("{i}-{j}")))
                    );
                }
            });
        }
    });
    assert_eq!(p.owner_count(), 0, "every thread's owner was dropped");
}
