//! Session membership, judged on real paths: a cwd inside a workspace (or a link into one) is a
//! member, a link out of one is not, and the innermost workspace wins.

mod support;

use seam::Signal;
use seam_workspace::WorkspaceErrorCode;
use support::{fixture, mkdir, runtime, s};

#[test]
fn the_root_and_a_directory_below_it_are_members_at_their_real_path() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let deep = mkdir(&f.root.join("project/src/deep"));
    let rt = runtime();
    let w = rt
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add")
        .workspace;
    for (cwd, real) in [
        (project.clone(), project.clone()),
        (deep.clone(), deep.clone()),
        (format!("{project}/src/deep/.."), format!("{project}/src")),
    ] {
        let session = rt
            .block_on(f.registry.session(&cwd, &Signal::none()))
            .expect(&cwd);
        assert_eq!(session.workspace(), &w, "{cwd}");
        assert_eq!(session.cwd(), real, "{cwd}");
    }
}

#[test]
fn a_cwd_that_is_a_symlink_into_the_workspace_is_a_member_at_its_real_path() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let src = mkdir(&f.root.join("project/src"));
    let outside = mkdir(&f.root.join("elsewhere"));
    std::os::unix::fs::symlink(&src, f.root.join("elsewhere/link-in")).expect("symlink");
    let rt = runtime();
    rt.block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    let session = rt
        .block_on(
            f.registry
                .session(&format!("{outside}/link-in"), &Signal::none()),
        )
        .expect("a link into the workspace is a member");
    assert_eq!(session.cwd(), src);
}

#[test]
fn a_cwd_that_is_a_symlink_out_of_the_workspace_is_not_a_member() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let outside = mkdir(&f.root.join("elsewhere"));
    std::os::unix::fs::symlink(&outside, f.root.join("project/link-out")).expect("symlink");
    let rt = runtime();
    rt.block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    let err = rt
        .block_on(
            f.registry
                .session(&format!("{project}/link-out"), &Signal::none()),
        )
        .expect_err("a link out is no member");
    assert_eq!(err.code(), WorkspaceErrorCode::NotMember, "{err}");
    assert!(
        err.message().contains(&outside),
        "names the real path: {err}"
    );
    // `..` from inside the workspace to outside it is not a member either.
    let err = rt
        .block_on(
            f.registry
                .session(&format!("{project}/../elsewhere"), &Signal::none()),
        )
        .expect_err("dot-dot out");
    assert_eq!(err.code(), WorkspaceErrorCode::NotMember, "{err}");
}

#[test]
fn a_sibling_whose_name_extends_the_root_is_not_inside_it() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let sibling = mkdir(&f.root.join("project-old"));
    let rt = runtime();
    rt.block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    let err = rt
        .block_on(f.registry.session(&sibling, &Signal::none()))
        .expect_err("project-old is not in project");
    assert_eq!(err.code(), WorkspaceErrorCode::NotMember, "{err}");
}

#[test]
fn a_missing_relative_or_file_cwd_is_not_a_member() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    std::fs::write(f.root.join("project/file.txt"), b"x").expect("file");
    let rt = runtime();
    rt.block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    for cwd in [
        format!("{project}/missing"),
        "project".to_string(),
        format!("{project}/file.txt"),
    ] {
        let err = rt
            .block_on(f.registry.session(&cwd, &Signal::none()))
            .expect_err(&cwd);
        assert_eq!(err.code(), WorkspaceErrorCode::NotMember, "{cwd}: {err}");
    }
}

/// Registers `mono` and `mono/packages/app` in the given order, then opens sessions below
/// both and between them.
fn nested(inner_first: bool) {
    let f = fixture();
    let outer = mkdir(&f.root.join("mono"));
    let inner = mkdir(&f.root.join("mono/packages/app"));
    let rt = runtime();
    let add = |root: &str| {
        rt.block_on(f.registry.add(root, None, &Signal::none()))
            .expect("add")
            .workspace
    };
    let (wi, wo) = if inner_first {
        let wi = add(&inner);
        (wi, add(&outer))
    } else {
        let wo = add(&outer);
        (add(&inner), wo)
    };
    let deep = mkdir(&f.root.join("mono/packages/app/src"));
    let session = rt
        .block_on(f.registry.session(&deep, &Signal::none()))
        .expect("deep");
    assert_eq!(session.workspace(), &wi, "inner first: {inner_first}");
    let session = rt
        .block_on(
            f.registry
                .session(&s(&f.root.join("mono/packages")), &Signal::none()),
        )
        .expect("between");
    assert_eq!(session.workspace(), &wo, "inner first: {inner_first}");
}

#[test]
fn the_innermost_of_nested_workspaces_is_the_sessions_whatever_the_order_of_registration() {
    // Either order, so neither a first-match nor a last-match search passes.
    nested(true);
    nested(false);
}

#[test]
fn a_root_replaced_by_a_link_admits_no_session_in_the_links_target() {
    let f = fixture();
    let victim = mkdir(&f.root.join("victim"));
    let outside = mkdir(&f.root.join("outside"));
    let rt = runtime();
    let w = rt
        .block_on(f.registry.add(&victim, None, &Signal::none()))
        .expect("add")
        .workspace;
    std::fs::remove_dir(&victim).expect("rmdir");
    std::os::unix::fs::symlink(&outside, &victim).expect("a link in its place");
    for cwd in [victim.as_str(), outside.as_str()] {
        let err = rt
            .block_on(f.registry.session(cwd, &Signal::none()))
            .expect_err(cwd);
        assert_eq!(err.code(), WorkspaceErrorCode::NotMember, "{cwd}: {err}");
    }
    let err = rt
        .block_on(f.registry.enter(&w, &Signal::none()))
        .expect_err("the record's root leads elsewhere now");
    assert_eq!(err.code(), WorkspaceErrorCode::InvalidRoot, "{err}");
    assert!(
        err.message().contains(&format!("now leads to {outside}")),
        "{err}"
    );
}

#[test]
fn entering_a_workspace_whose_directory_is_gone_is_an_invalid_root_naming_it() {
    let f = fixture();
    let gone = mkdir(&f.root.join("gone"));
    let rt = runtime();
    let w = rt
        .block_on(f.registry.add(&gone, None, &Signal::none()))
        .expect("add")
        .workspace;
    let session = rt
        .block_on(f.registry.enter(&w, &Signal::none()))
        .expect("enter while it exists");
    assert_eq!(session.cwd(), gone);
    std::fs::remove_dir(&gone).expect("rmdir");
    let err = rt
        .block_on(f.registry.enter(&w, &Signal::none()))
        .expect_err("gone");
    assert_eq!(err.code(), WorkspaceErrorCode::InvalidRoot, "{err}");
    assert!(
        err.message().contains(&w.id) && err.message().contains("no such directory"),
        "{err}"
    );
}

#[test]
fn a_removed_workspace_admits_no_new_session() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let rt = runtime();
    let w = rt
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add")
        .workspace;
    rt.block_on(f.registry.remove(&w.id, &Signal::none()))
        .expect("remove");
    let err = rt
        .block_on(f.registry.session(&project, &Signal::none()))
        .expect_err("no longer registered");
    assert_eq!(err.code(), WorkspaceErrorCode::NotMember, "{err}");
}
