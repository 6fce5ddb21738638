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

#[test]
fn the_innermost_of_nested_workspaces_is_the_sessions() {
    let f = fixture();
    let outer = mkdir(&f.root.join("mono"));
    let inner = mkdir(&f.root.join("mono/packages/app"));
    let rt = runtime();
    // The inner one first, so a first-match search would get it wrong the other way.
    let wi = rt
        .block_on(f.registry.add(&inner, None, &Signal::none()))
        .expect("inner")
        .workspace;
    let wo = rt
        .block_on(f.registry.add(&outer, None, &Signal::none()))
        .expect("outer")
        .workspace;
    let deep = mkdir(&f.root.join("mono/packages/app/src"));
    let session = rt
        .block_on(f.registry.session(&deep, &Signal::none()))
        .expect("deep");
    assert_eq!(session.workspace(), &wi);
    let session = rt
        .block_on(
            f.registry
                .session(&s(&f.root.join("mono/packages")), &Signal::none()),
        )
        .expect("between");
    assert_eq!(session.workspace(), &wo);
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
